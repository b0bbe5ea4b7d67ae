"""The order of the data-using sweep, resumable per arm: every finished run is one line of runs.jsonl, so a
killed sweep reruns nothing it has. For each arm: the bracketed rate sweep at the smallest and the largest
fraction (first seed), then every fraction at its chosen rate and every seed, then the permutation test at
the largest fraction. Lanes (`--lane I/N`) share the arms between processes on one machine; `parts` lets a
second process take an arm's permutation runs while the first runs its curve (both need the arm's chosen
rates, so start the permutation part once the rate sweeps are in the log, or it runs them too)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey
from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.rates import best_rate, interpolated_rate, next_rate
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RunLog

Runner = Callable[[ModalityPlan, Arm, RunKey], dict[str, Any]]
Part = Literal["curve", "permutation"]
PARTS: tuple[Part, ...] = ("curve", "permutation")


@dataclass(frozen=True)
class ArmJob:
    modality: str
    arm: str


def arm_jobs(plans: list[ModalityPlan], lane: Lane) -> list[ArmJob]:
    jobs = [ArmJob(plan.name, arm.name) for plan in plans for arm in plan.arms]
    return [job for i, job in enumerate(jobs) if i % lane.count == lane.index]


def swept_rates(
    plan: ModalityPlan, arm: Arm, fraction: float, log: RunLog, run: Runner
) -> tuple[float, dict]:
    """Run the bracketed sweep at one fraction (first seed); the chosen rate and every rate's val acc."""
    seed = plan.protocol.seeds[0]
    scores: dict[float, float] = {}
    while (rate := next_rate(scores, plan.protocol)) is not None:
        key = RunKey(modality=plan.name, arm=arm.name, fraction=fraction, lr=rate, seed=seed)
        scores[rate] = float(ensure(key, plan, arm, log, run)["val_acc"])
    return best_rate(scores), scores


def ensure(key: RunKey, plan: ModalityPlan, arm: Arm, log: RunLog, run: Runner) -> dict[str, Any]:
    done = log.get(key)
    if done is None:
        done = run(plan, arm, key)
        log.add(done)
    return done


def arm_keys(
    plan: ModalityPlan, arm: Arm, log: RunLog, run: Runner, parts: tuple[Part, ...] = PARTS
) -> Iterator[RunKey]:
    """Every key the arm's curve and permutation test need (of `parts`), running the rate sweeps on the
    way (they decide the rates)."""
    protocol = plan.protocol
    fractions = arm.fractions_of(protocol)
    if arm.is_floor:
        if "curve" not in parts:
            return
        for fraction in fractions:
            yield RunKey(modality=plan.name, arm=arm.name, fraction=fraction, lr=0.0, seed=protocol.seeds[0])
        return
    ends = {
        f: swept_rates(plan, arm, f, log, run)[0] for f in (protocol.fractions[0], protocol.fractions[-1])
    }
    for fraction in protocol.fractions if "curve" in parts else ():
        rate = interpolated_rate(fraction, ends, protocol)
        for seed in protocol.seeds:
            yield RunKey(modality=plan.name, arm=arm.name, fraction=fraction, lr=rate, seed=seed)
    if "permutation" in parts:
        full = fractions[-1]
        for seed in protocol.seeds:
            yield RunKey(
                modality=plan.name, arm=arm.name, fraction=full, lr=ends[full], seed=seed, permuted=True
            )


def run_sweep(
    plans: list[ModalityPlan], log_path: Path, run: Runner, lane: Lane, parts: tuple[Part, ...] = PARTS
) -> None:
    unknown = set(parts) - set(PARTS)
    if unknown or not parts:
        raise ValueError(f"parts={parts}: choose one or more of {PARTS}")
    log = RunLog(log_path, KEY_FIELDS)
    for job in arm_jobs(plans, lane):
        plan = next(p for p in plans if p.name == job.modality)
        arm = plan.arm(job.arm)
        for key in arm_keys(plan, arm, log, run, parts):
            ensure(key, plan, arm, log, run)
