"""Learning curves: transformer against inductive-bias baselines on growing fractions of the data.

For every modality, arm (backbone) and training fraction, the learning rate is chosen on the validation
split with the first seed; the other seeds then run at that rate. Test accuracy is read only for
reporting, never for choosing. Every finished run is appended to a JSONL file, so a killed sweep resumes
where it stopped.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tabrasa.evidence.arms import MODALITIES, TRANSFORMER, Modality, Sweep
from tabrasa.evidence.cli_run import fit_and_score, quiet_lightning


@dataclass(frozen=True)
class RunKey:
    modality: str
    arm: str
    fraction: float
    lr: float
    seed: int

    def id(self) -> str:
        return f"{self.modality}/{self.arm}/{self.fraction:g}/{self.lr:g}/{self.seed}"


def cli_args(root: Path, modality: Modality, key: RunKey, sweep: Sweep) -> list[str]:
    """Overrides of the modality's config for one run (fit_and_score adds the quiet trainer flags)."""
    args = [
        "--model.init_args.backbone", str(root / "configs" / "backbone" / f"{key.arm}.yaml"),
        "--model.init_args.optimizer.lr", str(key.lr),
        "--seed_everything", str(key.seed),
        "--data.init_args.train_fraction", str(key.fraction),
        "--data.init_args.batch_size", str(sweep.batch_size),
        "--data.init_args.seed", "0",  # splits and subsets stay fixed; the seed varies init and data order
        "--trainer.max_steps", str(sweep.steps),
    ]  # fmt: skip
    if sweep.limit is not None:
        args += ["--data.init_args.limit", str(sweep.limit)]
    if sweep.quick:
        for name, value in modality.data_overrides.items():
            args += [f"--data.init_args.{name}", str(value)]
    return args


def run_one(root: Path, modality: Modality, key: RunKey, sweep: Sweep) -> dict[str, object]:
    """Train one arm for a fixed number of steps; evaluate the final weights on validation and test."""
    scores = fit_and_score(root / modality.config, cli_args(root, modality, key, sweep))
    return {**asdict(key), **scores}


class RunLog:
    """Append-only JSONL of finished runs, keyed by `key_fields`: the resume point of a sweep."""

    def __init__(self, path: Path, key_fields: tuple[str, ...] = tuple(RunKey.__dataclass_fields__)) -> None:
        self.path = path
        self.key_fields = key_fields
        self.runs: dict[str, dict[str, object]] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    run = json.loads(line)
                    self.runs[self._id(run)] = run

    def _id(self, values: dict[str, object]) -> str:
        return "/".join(
            f"{values[f]:g}" if isinstance(values[f], float) else str(values[f]) for f in self.key_fields
        )

    def get(self, key: object) -> dict[str, object] | None:
        return self.runs.get(self._id(asdict(key)))  # type: ignore[call-overload]

    def best_rate(self, keys: list[Any]) -> float:
        """Of runs that differ only in `lr` (the sweep at the first seed), the rate with the best
        validation accuracy (ties: the smaller rate). LookupError if one has not run yet."""
        scored = []
        for key in keys:
            run = self.get(key)
            if run is None:
                raise LookupError(f"{self._id(asdict(key))} has not run yet")
            scored.append((float(run["val_acc"]), -key.lr, key.lr))  # type: ignore[arg-type]
        return max(scored)[2]

    def add(self, run: dict[str, object]) -> None:
        self.runs[self._id(run)] = run
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as handle:
            handle.write(json.dumps(run) + "\n")
            handle.flush()


def arms_of(modality: Modality, sweep: Sweep) -> tuple[str, ...]:
    return (TRANSFORMER, *(modality.quick_baselines if sweep.quick else modality.baselines))


def sweep_keys(modality: Modality, arm: str, fraction: float, sweep: Sweep) -> Iterator[RunKey]:
    for lr in sweep.learning_rates:
        yield RunKey(modality.name, arm, fraction, lr, sweep.seeds[0])


def best_lr(log: RunLog, modality: Modality, arm: str, fraction: float, sweep: Sweep) -> float:
    return log.best_rate(list(sweep_keys(modality, arm, fraction, sweep)))


def run_sweep(root: Path, names: list[str], sweep: Sweep, log: RunLog, echo: bool = True) -> None:
    quiet_lightning()
    for name in names:
        modality = MODALITIES[name]
        for arm in arms_of(modality, sweep):
            for fraction in sweep.fractions:
                keys = list(sweep_keys(modality, arm, fraction, sweep))
                for key in keys:
                    _run_if_missing(root, modality, key, sweep, log, echo)
                lr = best_lr(log, modality, arm, fraction, sweep)
                for seed in sweep.seeds[1:]:
                    _run_if_missing(root, modality, RunKey(name, arm, fraction, lr, seed), sweep, log, echo)


def _run_if_missing(
    root: Path, modality: Modality, key: RunKey, sweep: Sweep, log: RunLog, echo: bool
) -> None:
    if log.get(key) is not None:
        return
    run = run_one(root, modality, key, sweep)
    log.add(run)
    if echo:
        print(
            f"{key.id():45s} val {run['val_acc']:.3f} test {run['test_acc']:.3f} ({run['train_seconds']}s)",
            flush=True,
        )


@dataclass
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
    points = []
    for name in names:
        modality = MODALITIES[name]
        for arm in arms_of(modality, sweep):
            for fraction in sweep.fractions:
                try:
                    lr = best_lr(log, modality, arm, fraction, sweep)
                except LookupError:
                    continue  # not run yet
                runs = [log.get(RunKey(name, arm, fraction, lr, s)) for s in sweep.seeds]
                accs = [float(r["test_acc"]) for r in runs if r is not None]  # type: ignore[arg-type]
                examples = int(runs[0]["train_examples"]) if runs[0] else 0  # type: ignore[arg-type]
                std = statistics.stdev(accs) if len(accs) > 1 else 0.0
                points.append(Point(name, arm, fraction, examples, lr, statistics.mean(accs), std, len(accs)))
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
