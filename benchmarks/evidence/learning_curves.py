"""Learning curves: transformer against inductive-bias baselines on growing fractions of the data.

For every modality, arm (backbone) and training fraction, the learning rate is chosen on the validation
split with the first seed; the other seeds then run at that rate (`rate_sweep`). Every finished run is
appended to a JSONL file, so a killed sweep resumes where it stopped.

The self-pretrained arm (standard mode) is the transformer after the modality's pretraining preset ran on
the very inputs of the fraction it then fine-tunes on, labels dropped (Amos et al. 2024): one pretraining
run per (modality, fraction), at the first seed, shared by its fine-tunings, its loop seconds logged with
each run (`pretrain_seconds`). Its exports live in `pretrained/` beside the log and are reused on resume.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.evidence.arms import (
    MODALITIES,
    SELF_PRETRAINED,
    TRANSFORMER,
    Modality,
    StandardPlan,
    Sweep,
    backbone_file,
    width_args,
)
from benchmarks.evidence.cli_run import fit_and_score, quiet_lightning
from benchmarks.evidence.intervals import mean_interval
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.pretraining_bench import PretrainingBudget, Pretrainings, PretrainingTask
from benchmarks.evidence.rate_sweep import RunLog, arm_result, print_run, run_arm


@dataclass(frozen=True, kw_only=True)
class RunKey:
    modality: str
    arm: str
    fraction: float
    lr: float
    seed: int


KEY_FIELDS = tuple(RunKey.__dataclass_fields__)
EVERY_ARM = Lane()  # one process runs the whole sweep


def modality_sweep(modality: Modality, sweep: Sweep) -> Sweep:
    """The sweep as this modality runs it: under a plan, the plan's steps and batch size."""
    if not sweep.standard:
        return sweep
    plan = standard_plan(modality, sweep)
    return replace(sweep, steps=plan.steps, batch_size=plan.batch_size)


def standard_plan(modality: Modality, sweep: Sweep) -> StandardPlan:
    """The modality's StandardPlan that `sweep.plan` names."""
    plan = getattr(modality, sweep.plan or "", None)
    if not isinstance(plan, StandardPlan):
        raise ValueError(
            f"modality {modality.name!r} has no {sweep.plan!r} StandardPlan: give it one in arms.MODALITIES"
        )
    return plan


def plan_width(modality: Modality, sweep: Sweep) -> int | None:
    """Every arm's hidden width under the sweep's plan (None: the backbone YAMLs' own)."""
    return standard_plan(modality, sweep).width if sweep.standard else None


def data_overrides(modality: Modality, sweep: Sweep) -> dict[str, object]:
    if sweep.standard:
        return dict(standard_plan(modality, sweep).data)
    return dict(modality.quick_data) if sweep.quick else {}


def cli_args(
    root: Path, modality: Modality, key: RunKey, sweep: Sweep, export: str | None = None
) -> list[str]:
    """Overrides of the modality's config for one run (fit_and_score adds the quiet trainer flags); a
    self-pretrained run starts from `export`, a `tabrasa` checkpoint of the transformer."""
    backbone = TRANSFORMER if key.arm == SELF_PRETRAINED else key.arm
    args = [
        "--model.init_args.backbone", str(backbone_file(root, backbone)),
        *width_args(backbone, plan_width(modality, sweep)),
        "--data.init_args.train_fraction", str(key.fraction),
        *modality_sweep(modality, sweep).cli_args(key.lr, key.seed),
    ]  # fmt: skip
    for name, value in data_overrides(modality, sweep).items():
        args += [f"--data.init_args.{name}", str(value)]
    if key.arm == SELF_PRETRAINED:
        if export is None:
            raise ValueError(f"{key}: the self-pretrained arm needs its pretraining export")
        args += ["--model.init_args.pretrained", json.dumps({"family": "tabrasa", "path": export})]
    return args


def arms_of(modality: Modality, sweep: Sweep) -> tuple[str, ...]:
    baselines = modality.quick_baselines if sweep.quick else modality.baselines
    return (TRANSFORMER, *baselines, *((SELF_PRETRAINED,) if sweep.self_pretrained else ()))


def pretraining_of(modality: Modality, sweep: Sweep) -> tuple[PretrainingTask, PretrainingBudget]:
    """The self-pretrained arm's pretraining, as the pretraining benchmark makes it: the modality's preset
    on the fraction's inputs with the same data overrides as its fine-tuning, so both read one vocabulary
    and one alphabet."""
    if not modality.pretrain:
        raise ValueError(f"modality {modality.name!r} names no pretraining preset (Modality.pretrain)")
    task = PretrainingTask(
        name=modality.name,
        config=modality.config,
        pretrain=modality.pretrain,
        baseline="",
        data_overrides=tuple((k, str(v)) for k, v in data_overrides(modality, sweep).items()),
    )
    steps = standard_plan(modality, sweep).pretrain_steps if sweep.standard else sweep.steps
    budget = PretrainingBudget(
        learning_rates=sweep.learning_rates,
        seeds=sweep.seeds,
        fractions=sweep.fractions,
        finetune_steps=modality_sweep(modality, sweep).steps,
        pretrain_steps=steps,
        limit=sweep.limit,
        backbone_args=tuple(width_args(TRANSFORMER, plan_width(modality, sweep))),
    )
    return task, budget


def _arms(names: list[str], sweep: Sweep) -> list[RunKey]:
    """Every (modality, backbone, fraction), with placeholder rate and seed."""
    return [
        RunKey(modality=name, arm=arm, fraction=fraction, lr=0.0, seed=0)
        for name in names
        for arm in arms_of(MODALITIES[name], sweep)
        for fraction in sweep.fractions
    ]


def run_sweep(
    root: Path, names: list[str], sweep: Sweep, log: RunLog, echo: bool = True, lane: Lane = EVERY_ARM
) -> None:
    """Train what is missing of the sweep, or of `lane`'s share of its arms."""
    quiet_lightning()

    def train(key: Any) -> dict[str, Any]:
        modality = MODALITIES[key.modality]
        pre = None
        if key.arm == SELF_PRETRAINED:
            task, budget = pretraining_of(modality, sweep)
            pre = Pretrainings(root, log.path.parent / "pretrained", budget).get(task, "self", key.fraction)
        args = cli_args(root, modality, key, sweep, pre["export"] if pre else None)
        scores = fit_and_score(root / modality.config, args)
        return scores | {"pretrain_seconds": float(pre["loop_seconds"]) if pre else 0.0}

    for arm in lane.share(_arms(names, sweep)):
        run_arm(arm, sweep, log, train, print_run if echo else None)


@dataclass(frozen=True, kw_only=True)
class Point:
    """One arm at one fraction, at its chosen rate. test_values: one test accuracy per seed (in seed order);
    test_low/test_high: their 95% interval of the mean. rates: every rate its sweep ran; bracketed: the
    chosen one has a worse rate on each side. val_mean: mean validation accuracy over the seeds (what picks
    the best baseline; test never does). majority: the test split's majority-class share."""

    modality: str
    arm: str
    fraction: float
    train_examples: int
    lr: float
    test_mean: float
    test_std: float
    seeds: int
    test_values: tuple[float, ...] = ()
    test_low: float = 0.0
    test_high: float = 0.0
    val_mean: float = 0.0
    rates: tuple[float, ...] = ()
    bracketed: bool = False
    majority: float = 0.0
    classes: int = 0
    train_seconds: float = 0.0
    pretrain_seconds: float = 0.0


def summarise(log: RunLog, names: list[str], sweep: Sweep) -> list[Point]:
    """One point per arm and fraction whose rate sweep has finished, at its chosen rate."""
    points = []
    for arm in _arms(names, sweep):
        result = arm_result(arm, sweep, log)
        if result is None:
            continue  # not run yet
        runs = result.runs
        tests = tuple(float(r["test_acc"]) for r in runs)
        interval = mean_interval(tests)
        points.append(
            Point(
                modality=arm.modality,
                arm=arm.arm,
                fraction=arm.fraction,
                train_examples=int(runs[0]["train_examples"]),
                lr=result.lr,
                test_mean=result.test_mean,
                test_std=result.test_std,
                seeds=len(runs),
                test_values=tests,
                test_low=interval.low,
                test_high=interval.high,
                val_mean=statistics.fmean(float(r["val_acc"]) for r in runs),
                rates=result.rates,
                bracketed=result.bracketed,
                majority=float(runs[0].get("test_majority", 0.0)),
                classes=int(runs[0].get("classes", 0)),
                train_seconds=round(statistics.fmean(float(r["train_seconds"]) for r in runs), 1),
                pretrain_seconds=float(runs[0].get("pretrain_seconds", 0.0)),
            )
        )
    return points


def crossover(points: list[Point], modality: str, baseline: str) -> float | None:
    """The smallest fraction from which the transformer matches or beats the baseline at every larger
    fraction; None when it never does."""
    ours = {p.fraction: p.test_mean for p in points if p.modality == modality and p.arm == TRANSFORMER}
    theirs = {p.fraction: p.test_mean for p in points if p.modality == modality and p.arm == baseline}
    fractions = sorted(set(ours) & set(theirs))
    answer = None
    for fraction in reversed(fractions):
        if ours[fraction] >= theirs[fraction]:
            answer = fraction
        else:
            break
    return answer
