"""Learning curves: transformer against inductive-bias baselines on growing fractions of the data.

For every modality, arm (backbone) and training fraction, the learning rate is chosen on the validation
split with the first seed; the other seeds then run at that rate (`rate_sweep`). Every finished run is
appended to a JSONL file, so a killed sweep resumes where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabrasa.evidence.arms import MODALITIES, TRANSFORMER, Modality, Sweep
from tabrasa.evidence.cli_run import fit_and_score, quiet_lightning
from tabrasa.evidence.rate_sweep import RunLog, arm_result, print_run, run_arm


@dataclass(frozen=True, kw_only=True)
class RunKey:
    modality: str
    arm: str
    fraction: float
    lr: float
    seed: int


KEY_FIELDS = tuple(RunKey.__dataclass_fields__)


def cli_args(root: Path, modality: Modality, key: RunKey, sweep: Sweep) -> list[str]:
    """Overrides of the modality's config for one run (fit_and_score adds the quiet trainer flags)."""
    args = [
        "--model.init_args.backbone", str(root / "configs" / "backbone" / f"{key.arm}.yaml"),
        "--data.init_args.train_fraction", str(key.fraction),
        *sweep.cli_args(key.lr, key.seed),
    ]  # fmt: skip
    if sweep.quick:
        for name, value in modality.quick_data.items():
            args += [f"--data.init_args.{name}", str(value)]
    return args


def arms_of(modality: Modality, sweep: Sweep) -> tuple[str, ...]:
    return (TRANSFORMER, *(modality.quick_baselines if sweep.quick else modality.baselines))


def _arms(names: list[str], sweep: Sweep) -> list[RunKey]:
    """Every (modality, backbone, fraction), with placeholder rate and seed."""
    return [
        RunKey(modality=name, arm=arm, fraction=fraction, lr=0.0, seed=0)
        for name in names
        for arm in arms_of(MODALITIES[name], sweep)
        for fraction in sweep.fractions
    ]


def run_sweep(root: Path, names: list[str], sweep: Sweep, log: RunLog, echo: bool = True) -> None:
    quiet_lightning()

    def train(key: Any) -> dict[str, Any]:
        modality = MODALITIES[key.modality]
        return fit_and_score(root / modality.config, cli_args(root, modality, key, sweep))

    for arm in _arms(names, sweep):
        run_arm(arm, sweep, log, train, print_run if echo else None)


@dataclass(frozen=True, kw_only=True)
class Point:
    modality: str
    arm: str
    fraction: float
    train_examples: int
    lr: float
    test_mean: float
    test_std: float
    seeds: int


def summarise(log: RunLog, names: list[str], sweep: Sweep) -> list[Point]:
    """One point per arm and fraction whose rate sweep has finished, at its chosen rate."""
    points = []
    for arm in _arms(names, sweep):
        result = arm_result(arm, sweep, log)
        if result is None:
            continue  # not run yet
        points.append(
            Point(
                modality=arm.modality,
                arm=arm.arm,
                fraction=arm.fraction,
                train_examples=int(result.runs[0]["train_examples"]),
                lr=result.lr,
                test_mean=result.test_mean,
                test_std=result.test_std,
                seeds=len(result.runs),
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
