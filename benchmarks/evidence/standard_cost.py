"""What a planned learning-curve sweep (the standard mode, or the wide one it replaced) costs on an idle
machine.

The sweep's own log records each run's `fit` seconds, but those were measured on whatever else the
machine ran at the time (several sweeps and the test suite shared two cores), and they leave out scoring.
Here each (modality, arm) of the sweep's plan is timed once at full data, one process per lane, one
thread each, nothing else running: its whole run (CLI build, data set-up, training loop, scoring on the
validation and test splits) and its loop alone, plus one pretraining of the self-pretrained arm. The
projection then prices every run the committed log holds at those costs, with the loop scaled to the
run's steps, and adds one pretraining per logged pretraining.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.evidence.arms import MODALITIES, SELF_PRETRAINED, TRANSFORMER, Sweep
from benchmarks.evidence.cli_run import loop_seconds, quiet_lightning, trained
from benchmarks.evidence.learning_curves import (
    RunKey,
    arms_of,
    cli_args,
    modality_sweep,
    pretraining_of,
)
from benchmarks.evidence.pretraining_bench import Pretrainings

PRETRAINING = "pretraining"  # the arm name of a timed pretraining run
TIMED_FRACTION = 1.0  # the largest data set-up and scoring of any fraction: the dearest run of an arm
TIMING_FIELDS = ("modality", "arm")


@dataclass(frozen=True, kw_only=True)
class Job:
    """One timing: a modality's arm at full data (the self-pretrained arm fine-tunes the transformer at
    the transformer's cost, so it is timed as its pretraining, arm PRETRAINING)."""

    modality: str
    arm: str
    lr: float


def jobs(names: list[str], sweep: Sweep) -> list[Job]:
    """Every timing a planned sweep needs, one per arm of each modality named."""
    return [
        Job(modality=name, arm=PRETRAINING if arm == SELF_PRETRAINED else arm, lr=1e-3)
        for name in names
        for arm in arms_of(MODALITIES[name], sweep)
    ]


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def time_job(root: Path, job: Job, sweep: Sweep) -> dict[str, Any]:
    """Run one timing of `sweep`'s plan in this process (one thread); its seconds and the load around it."""
    import torch

    torch.set_num_threads(1)
    quiet_lightning()
    modality = MODALITIES[job.modality]
    load_start = load_average()
    start = time.perf_counter()
    if job.arm == PRETRAINING:
        task, budget = pretraining_of(modality, sweep)
        with tempfile.TemporaryDirectory(prefix="tabrasa-cost-") as folder:
            run = Pretrainings(root, Path(folder), budget).get(task, "self", TIMED_FRACTION)
        loop, steps, scoring = float(run["loop_seconds"]), int(run["steps"]), 0.0
    else:
        key = RunKey(modality=job.modality, arm=job.arm, fraction=TIMED_FRACTION, lr=job.lr, seed=0)
        with trained(root / modality.config, cli_args(root, modality, key, sweep)) as (cli, _):
            loop, steps = loop_seconds(cli), int(cli.trainer.global_step)
            scored = time.perf_counter()
            cli.trainer.validate(cli.model, datamodule=cli.datamodule, verbose=False)
            cli.trainer.test(cli.model, datamodule=cli.datamodule, verbose=False)
            scoring = time.perf_counter() - scored
    return {
        "modality": job.modality,
        "arm": job.arm,
        "steps": steps,
        "run_seconds": round(time.perf_counter() - start, 1),
        "loop_seconds": round(loop, 1),
        "scoring_seconds": round(scoring, 1),
        "load_average_start": load_start,
        "load_average_end": load_average(),
    }


def run_seconds(timing: dict[str, Any], steps: int) -> float:
    """A run of `steps` steps at this timing's cost: everything but the loop fixed, the loop per step."""
    fixed = float(timing["run_seconds"]) - float(timing["loop_seconds"])
    return fixed + float(timing["loop_seconds"]) * steps / int(timing["steps"])


@dataclass(frozen=True, kw_only=True)
class ModalityCost:
    """One modality of the committed sweep priced at idle costs. logged_seconds: what the sweep's log
    says its `fit` calls and pretraining loops took (scoring not included), for comparison."""

    modality: str
    runs: int
    pretrainings: int
    logged_seconds: float
    idle_seconds: float
    longest_run_seconds: float


def project(
    sweep: Sweep,
    timings: dict[tuple[str, str], dict[str, Any]],
    runs: list[dict[str, Any]],
    pretrainings: list[dict[str, Any]],
) -> list[ModalityCost]:
    """Price every logged run and pretraining of a planned sweep at its (modality, arm) idle timing.
    KeyError names a (modality, arm) the log holds but the timings lack."""
    costs = []
    for name in dict.fromkeys(str(run["modality"]) for run in runs):
        plan_steps = modality_sweep(MODALITIES[name], sweep).steps
        mine = [run for run in runs if run["modality"] == name]
        priced = []
        for run in mine:
            arm = TRANSFORMER if run["arm"] == SELF_PRETRAINED else str(run["arm"])
            if (name, arm) not in timings:
                raise KeyError(f"no idle timing for ({name!r}, {arm!r}): run bench_standard_cost.py for it")
            priced.append(run_seconds(timings[name, arm], int(run.get("steps", plan_steps))))
        count = Counter(str(p["task"]) for p in pretrainings)[name]
        pretrain = float(timings[name, PRETRAINING]["run_seconds"]) * count if count else 0.0
        logged = sum(float(r["train_seconds"]) for r in mine)
        logged += sum(float(p["loop_seconds"]) for p in pretrainings if p["task"] == name)
        costs.append(
            ModalityCost(
                modality=name,
                runs=len(mine),
                pretrainings=count,
                logged_seconds=round(logged),
                idle_seconds=round(sum(priced) + pretrain),
                longest_run_seconds=round(max(priced), 1),
            )
        )
    return costs


def markdown(costs: list[ModalityCost], lanes: int) -> str:
    lines = [
        "| modality | runs | pretrainings | logged seconds (fit + pretraining loops) "
        f"| idle seconds (whole runs) | idle hours on {lanes} lanes |",
        "|---|---|---|---|---|---|",
    ]
    for cost in costs:
        lines.append(
            f"| {cost.modality} | {cost.runs} | {cost.pretrainings} | {cost.logged_seconds:,.0f} "
            f"| {cost.idle_seconds:,.0f} | {cost.idle_seconds / lanes / 3600:.2f} |"
        )
    idle = sum(c.idle_seconds for c in costs)
    logged = sum(c.logged_seconds for c in costs)
    runs = sum(c.runs for c in costs)
    pre = sum(c.pretrainings for c in costs)
    lines.append(f"| all | {runs} | {pre} | {logged:,.0f} | {idle:,.0f} | {idle / lanes / 3600:.2f} |")
    return "\n".join(lines) + "\n"


def median_load(timings: list[dict[str, Any]]) -> float:
    return statistics.median(float(t["load_average_end"]) for t in timings)
