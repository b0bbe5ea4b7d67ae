"""The order of the data-using sweep, resumable per run: every finished run is one line of runs.jsonl, so a
killed sweep reruns nothing it has.

For each arm: the bracketed rate sweep at the smallest and the largest fraction (first seed), then, seed by
seed, every fraction at its chosen rate and the permutation run at the largest fraction, so a sweep
stopped early leaves whole curves of the first seeds rather than every seed of the first fractions. The
permuted runs train at the largest fraction's chosen rate unless the first seed's did not train there
(benchmarks.curves.permutation_rate); the later seeds' are named once the first seed's is decided.

Several processes on one machine may share the work. Lanes (`--lane I/N`) share out the arms. Processes
that are given the same arms share each arm run by run: before training, a process claims its run
(benchmarks.curves.claims) and takes the next unclaimed one when another process holds it. Where every run
an arm needs now is held elsewhere (a rate sweep waiting for its result), the process works on its next
arm meanwhile, and waits only when every arm it has left is held up so.
`parts` picks the curve, the permutation runs, or both.

`may_start` is asked before each run: once it says no, the process starts nothing more and returns, and the
run under way finishes and is logged. A sweep given a time window (`--start-within HOURS`) so ends between
runs instead of being killed in the middle of one, whose training would be lost. `fits` is asked of each run
before it starts (`--finish-before`: does its price end before then?): a run that does not fit is passed
over for the next one that does, and the sweep returns once every run left is too long or held elsewhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchmarks.curves.claims import WAIT_SECONDS, Claims
from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey
from benchmarks.curves.permutation_rate import permutation_rate
from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.rates import best_rate, grid, interpolated_rate, next_rate, rate_scores
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RunLog

Runner = Callable[[ModalityPlan, Arm, RunKey], dict[str, Any]]
Fits = Callable[[ModalityPlan, Arm, RunKey], bool]  # whether a run may start now and end in time
Part = Literal["curve", "permutation"]
PARTS: tuple[Part, ...] = ("curve", "permutation")


@dataclass(frozen=True)
class ArmJob:
    modality: str
    arm: str


def arm_jobs(plans: list[ModalityPlan], lane: Lane) -> list[ArmJob]:
    jobs = [ArmJob(plan.name, arm.name) for plan in plans for arm in plan.arms]
    return [job for i, job in enumerate(jobs) if i % lane.count == lane.index]


def needed_keys(
    plan: ModalityPlan, arm: Arm, log: RunLog, parts: tuple[Part, ...] = PARTS
) -> tuple[list[RunKey], bool]:
    """The runs the arm needs that can be named from what the log holds, in the order to run them, and
    whether that list is final (both rate sweeps decided; until then only rate-sweep runs are named)."""
    protocol = plan.protocol
    fractions = arm.fractions_of(protocol)

    def key(fraction: float, lr: float, seed: int, permuted: bool = False) -> RunKey:
        return RunKey(
            modality=plan.name, arm=arm.name, fraction=fraction, lr=lr, seed=seed, permuted=permuted
        )

    if arm.is_floor:  # no rate: one fit per fraction
        return ([key(f, 0.0, protocol.seeds[0]) for f in fractions] if "curve" in parts else []), True
    pending: list[RunKey] = []
    ends: dict[float, float] = {}
    for fraction in (fractions[0], fractions[-1]):
        scores = rate_scores(plan, arm.name, fraction, log.runs.values())
        missing = [rate for rate in grid(protocol) if rate not in scores]  # independent: may run at once
        if not missing and (extension := next_rate(scores, protocol)) is not None:
            missing = [extension]
        if missing:
            pending += [key(fraction, rate, protocol.seeds[0]) for rate in missing]
        else:
            ends[fraction] = best_rate(scores)
    if pending:
        return pending, False
    permuted = permutation_rate(plan, arm, ends[fractions[-1]], log.runs.values())
    keys = []
    for seed in protocol.seeds:
        if "curve" in parts:
            keys += [key(f, interpolated_rate(f, ends, protocol), seed) for f in fractions]
        # the other seeds' permuted runs wait for the first seed's to say whether its rate trains
        named = permuted.decided or seed == protocol.seeds[0]
        if "permutation" in parts and arm.permutation_test and named:
            keys.append(key(fractions[-1], permuted.rate, seed, permuted=True))
    return keys, True


def curve_finished(plan: ModalityPlan, arm: Arm, log: RunLog) -> bool:
    """Whether the log holds the arm's whole curve: rate sweeps closed, every seed at every fraction."""
    keys, final = needed_keys(plan, arm, log, parts=("curve",))
    return final and all(log.get(key) is not None for key in keys)


Step = Literal["done", "ran", "blocked", "too_long"]


def always_fits(plan: ModalityPlan, arm: Arm, key: RunKey) -> bool:
    return True


def arm_step(
    plan: ModalityPlan,
    arm: Arm,
    log: RunLog,
    run: Runner,
    claims: Claims,
    parts: tuple[Part, ...] = PARTS,
    fits: Fits = always_fits,
) -> Step:
    """Train the arm's next run that no other process holds and that `fits`: "ran"; "done" when the arm
    needs nothing more; "blocked" when a run it needs now is being trained by another process;
    "too_long" when every run it could start now would not end in time."""
    log.refresh()
    keys, final = needed_keys(plan, arm, log, parts)
    todo = [k for k in keys if log.get(k) is None]
    if not todo and final:
        return "done"
    held = False
    for key in todo:
        name = log.name(key)
        if claims.owner(name) is not None:
            held = True
            continue
        if not fits(plan, arm, key):
            continue
        if not claims.take(name):
            held = True
            continue
        try:
            log.refresh()  # it may have landed between the listing and the claim
            if log.get(key) is None:
                log.add(run(plan, arm, key))
        finally:
            claims.release(name)
        return "ran"
    return "blocked" if held else "too_long"


def start_window(hours: float | None, clock: Callable[[], float] = time.monotonic) -> Callable[[], bool]:
    """Whether a run may start now: always without a window, else until `hours` after this call."""
    if hours is None:
        return lambda: True
    deadline = clock() + 3600 * hours
    return lambda: clock() < deadline


def run_sweep(
    plans: list[ModalityPlan],
    log_path: Path,
    run: Runner,
    lane: Lane,
    parts: tuple[Part, ...] = PARTS,
    claims: Claims | None = None,
    wait: Callable[[float], None] = time.sleep,
    may_start: Callable[[], bool] = lambda: True,
    fits: Fits = always_fits,
) -> bool:
    """Run every arm's runs that the log lacks; True when all are done, False when `may_start` stopped it
    or every run left is too long to fit (`fits`)."""
    unknown = set(parts) - set(PARTS)
    if unknown or not parts:
        raise ValueError(f"parts={parts}: choose one or more of {PARTS}")
    log = RunLog(log_path, KEY_FIELDS)
    claims = claims or Claims(log_path)
    pending = arm_jobs(plans, lane)
    while pending:  # the first arm first; a blocked arm lends its turn to the next, never its runs
        ran = blocked = False
        for job in list(pending):
            if not may_start():
                return False
            plan = next(p for p in plans if p.name == job.modality)
            state = arm_step(plan, plan.arm(job.arm), log, run, claims, parts, fits)
            if state == "done":
                pending.remove(job)
            elif state == "ran":
                ran = True
                break
            blocked |= state == "blocked"
        if ran or not pending:
            continue
        if not blocked:
            return False  # every run left is too long for the time left, and no other process holds one
        wait(WAIT_SECONDS)  # an arm left waits on runs another process is training
    return True
