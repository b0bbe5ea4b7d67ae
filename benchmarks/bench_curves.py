"""Data-using learning curves and the permutation test on the priors (the protocol of benchmarks/curves/).

    python -m benchmarks.bench_curves --modalities image &     # two processes share each arm run by run
    python -m benchmarks.bench_curves --modalities image
    python -m benchmarks.bench_curves --report-only            # tables from the log, no training
    python -m benchmarks.bench_curves --unfinished             # runs stopped in the middle, and how far

Run from the repository root. Every run appends to OUT/runs.jsonl, so a killed sweep resumes per run;
processes on one machine claim the runs they train (benchmarks/curves/claims.py), so none runs twice.
A run killed in the middle keeps its checkpoints (under $TABRASA_CACHE, or `--runs-folder`: a place that
outlives a reboot; `results/curves/unfinished`, committed, outlives a machine) and resumes from the last one
when a sweep reaches it.
`--lane I/N` instead deals whole arms out to N processes. `--start-within HOURS` starts no run after that
many hours and lets the one under way finish: for a machine held for a fixed time. `--start-before TIME`
is the same window as a clock time, so commands run one after another share it, and one reached after it
starts nothing. `--finish-before TIME` starts a run only when its price says it ends by then, passing over
longer runs: for a machine whose disk, checkpoints included, does not outlive its loan.
The report writes OUT/points.csv, OUT/report.md and the permutation summary (`--permutation-out`).
Arms whose backbone or task config does not exist are refused by name; `--arms` picks a subset.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import torch

from benchmarks.curves.claims import Claims, made_once
from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey, runs_folder_of_log, train_and_score
from benchmarks.curves.finish_window import FinishWindow
from benchmarks.curves.floors import fit_floor
from benchmarks.curves.plan import MODALITIES, Arm, ModalityPlan, Protocol
from benchmarks.curves.plan_cost import measured_prices
from benchmarks.curves.report import write_permutation, write_points, write_report
from benchmarks.curves.self_pretraining import pretraining_export
from benchmarks.curves.sweep import PARTS, always_fits, run_sweep, start_window
from benchmarks.curves.teachers import teacher_for
from benchmarks.curves.unfinished import unfinished_runs
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RunLog
from tabrasa.training.freed_memory import keep_freed_memory

ROOT = Path(__file__).resolve().parents[1]
SMOKE = Protocol(fractions=(0.5, 1.0), seeds=(0,), max_epochs=2, patience=1, min_steps=1, patience_steps=1,
                 batch_size=16, width=16,
                 rates=(1e-3,), bracket=0, teacher_min_steps=1,
                 data={"limit": 64, "val_size": 32})  # fmt: skip


def runner(root: Path, out: Path, unfinished: Path) -> Any:
    """`unfinished`: where a killed run's checkpoints wait for its resume."""
    shared = Claims(out / "shared-inputs")  # processes sharing an arm make each fraction's inputs once

    def run(plan: ModalityPlan, arm: Arm, key: RunKey) -> dict[str, Any]:
        if arm.is_floor:
            record = fit_floor(root, arm, key, plan.protocol)
        else:
            export = teacher = None
            inputs_of = f"{key.modality} {key.fraction:g}"  # what a fraction's shared inputs are named by
            if arm.pretrain is not None:
                pretrain = partial(pretraining_export, root, out / "pretrained", arm, key, plan.protocol)
                export = made_once(shared, f"pretraining {inputs_of}", pretrain)
            if arm.teacher is not None:
                fit_teacher = partial(teacher_for, root, out / "teachers", arm, key, plan.protocol)
                teacher = made_once(shared, f"teacher {inputs_of}", fit_teacher)
            record = train_and_score(
                root, arm, key, plan.protocol, plan.permutation_flag, export, teacher, runs_folder=unfinished
            )
        shuffled = "permuted " if key.permuted else ""
        print(
            f"{key.modality:8} {key.arm:16} f={key.fraction:<5g} lr={key.lr:<8g} seed={key.seed} {shuffled}"
            f"→ val {record['val_acc']:.3f} test {record['test_acc']:.3f} "
            f"({record['epochs']} epochs, {record['stopped']}, {record['seconds']:.0f} s"
            f"{', resumed' if record.get('segments', 1) > 1 else ''})",
            flush=True,
        )
        return record

    return run


def selected_plans(
    names: list[str], arms: list[str] | None, smoke: bool, root: Path, check: bool = True
) -> list[ModalityPlan]:
    plans = []
    for name in names:
        if name not in MODALITIES:
            raise SystemExit(f"--modalities {name}: choose from {sorted(MODALITIES)}")
        plan = MODALITIES[name]
        # in the order --arms gives them: the sweep runs the first arm first
        chosen = (
            plan.arms
            if arms is None
            else tuple(plan.arm(a) for a in arms if a in {x.name for x in plan.arms})
        )
        for arm in chosen:
            needed = (root / arm.config, root / "configs" / "backbone" / (arm.backbone or "small.yaml"),
                      *(root / layer for layer in arm.layers))  # fmt: skip
            missing = [path for path in needed if not path.exists()]
            if missing and check:
                raise SystemExit(
                    f"arm {name}/{arm.name}: {missing[0]} does not exist; leave it out with --arms"
                )
        protocol = replace(SMOKE, data={**plan.protocol.data, **SMOKE.data}) if smoke else plan.protocol
        if smoke:  # every arm at the smoke fractions (an arm's own subset names the protocol's)
            chosen = tuple(replace(arm, fractions=None) for arm in chosen)
        plans.append(replace(plan, arms=chosen, protocol=protocol))
    return plans


def clock_time(text: str) -> datetime:
    """--start-before's value: an ISO date and time, read in the machine's local time zone."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date and time; write it as 2026-12-07T05:25 (local time)"
        ) from None


def finish_window(deadline: float, out: Path, runs_folder: Path, smoke: bool) -> FinishWindow:
    """The `--finish-before` window: prices from the log and OUT/arm_cost, less what unfinished runs hold."""
    log_path = out / "runs.jsonl"
    log = RunLog(log_path, KEY_FIELDS)
    held = unfinished_runs(runs_folder, log, Claims(log_path))
    return FinishWindow(
        deadline=deadline,
        log=log,
        plans=selected_plans(list(MODALITIES), None, smoke, ROOT, check=False),
        measured=measured_prices(out / "arm_cost"),
        done={log.name(run.key): run.fit_seconds for run in held},
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modalities", nargs="+", default=list(MODALITIES))
    p.add_argument("--arms", nargs="+", default=None, help="only these arms (names as in points.csv)")
    p.add_argument("--lane", default="0/1", help="INDEX/COUNT: this process's share of the arms")
    p.add_argument("--out", type=Path, default=Path("results/curves"))  # relative: logs name no machine
    p.add_argument("--permutation-out", type=Path, default=Path("results/permutation/summary.csv"))
    p.add_argument(
        "--parts", nargs="+", choices=PARTS, default=list(PARTS),
        help="curve, permutation or both; a second process may take an arm's permutation runs once its "
        "rate sweeps are logged",
    )  # fmt: skip
    p.add_argument("--report-only", action="store_true", help="write the tables from the log; train nothing")
    p.add_argument(
        "--unfinished", action="store_true",
        help="list the runs stopped in the middle or under way (resumed by the next sweep); train nothing",
    )  # fmt: skip
    p.add_argument(
        "--runs-folder", type=Path, default=None,
        help="where unfinished runs keep their checkpoints (default: under $TABRASA_CACHE, keyed by the log; "
        "it must outlive the machine's /tmp for a run longer than one loan of the machine; "
        "results/curves/unfinished keeps them in the checkout, to be committed where the disk does not "
        "outlive the loan)",
    )  # fmt: skip
    p.add_argument("--threads", type=int, default=1, help="torch threads (1: one lane a core)")
    p.add_argument("--smoke", action="store_true", help="seconds: 64 examples, 2 epochs, 16 wide (tests)")
    window = p.add_mutually_exclusive_group()
    window.add_argument(
        "--start-within", type=float, default=None, metavar="HOURS",
        help="start runs only within this many hours of launch; the run under way then finishes, so a "
        "sweep with a time window stops between runs and loses none (rerun the command to resume)",
    )  # fmt: skip
    window.add_argument(
        "--start-before", type=clock_time, default=None, metavar="TIME",
        help="the same window ending at a local time (2026-12-07T05:25): a chain of sweeps shares one "
        "window, and a sweep reached after it starts no run",
    )  # fmt: skip
    window.add_argument(
        "--finish-before", type=clock_time, default=None, metavar="TIME",
        help="start a run only when its price says it ends before this local time, passing over a longer "
        "one for the next that fits: for a machine whose disk does not outlive its loan",
    )  # fmt: skip
    args = p.parse_args(argv)
    if args.start_within is not None and not args.start_within > 0:
        p.error(f"--start-within {args.start_within}: give the hours in which runs may start, > 0")
    torch.set_num_threads(args.threads)  # torch is imported: an env variable is too late
    log_path = args.out / "runs.jsonl"
    runs_folder = args.runs_folder or runs_folder_of_log(log_path)
    if args.unfinished:
        folder = runs_folder
        runs = unfinished_runs(folder, RunLog(log_path, KEY_FIELDS), Claims(log_path))
        for run in runs:
            print(run.line())
        print(f"{len(runs)} unfinished {'run' if len(runs) == 1 else 'runs'} in {folder}")
        return 0
    lane = Lane.parse(args.lane)
    plans = selected_plans(args.modalities, args.arms, args.smoke, ROOT, check=not args.report_only)
    if not args.report_only:
        hours, flag = args.start_within, f"--start-within {args.start_within}"
        if args.start_before is not None:  # a past time gives a window already over: nothing starts
            hours = (args.start_before.timestamp() - time.time()) / 3600
            flag = f"--start-before {args.start_before:%Y-%m-%dT%H:%M}"
        fits: FinishWindow | None = None
        if args.finish_before is not None:
            hours = (args.finish_before.timestamp() - time.time()) / 3600
            flag = f"--finish-before {args.finish_before:%Y-%m-%dT%H:%M}"
            fits = finish_window(args.finish_before.timestamp(), args.out, runs_folder, args.smoke)
        window = start_window(hours)
        keep_freed_memory()  # a third of a CPU step's time went to page faults without it (its module)
        train = runner(ROOT, args.out, runs_folder)
        parts = tuple(args.parts)
        if not run_sweep(plans, log_path, train, lane, parts, may_start=window, fits=fits or always_fits):
            print(f"{flag}: the window is over; the same command resumes")
            if fits is not None and fits.summary():
                print(fits.summary())
    if lane.count > 1 and not args.report_only:
        return 0  # the report waits for a call without --lane
    rows = list(RunLog(log_path, KEY_FIELDS).runs.values())
    # every modality and arm, whatever this process trained: a sweep of one never drops another's rows
    everything = selected_plans(list(MODALITIES), None, args.smoke, ROOT, check=False)
    by_name = {plan.name: plan for plan in everything}
    write_points(rows, by_name, args.out / "points.csv")
    write_report(rows, by_name, args.out / "report.md")
    write_permutation(rows, by_name, args.permutation_out)
    print(f"wrote {args.out / 'points.csv'}, {args.out / 'report.md'}, {args.permutation_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
