"""Learning curves: transformer against inductive-bias baselines on growing fractions of the data.

For every modality, arm (backbone) and training fraction, the learning rate is chosen on the validation
split with the first seed; the other seeds then run at that rate. Test accuracy is read only for
reporting, never for choosing. Every finished run is appended to a JSONL file, so a killed sweep resumes
where it stopped.
"""

from __future__ import annotations

import json
import logging
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from tabrasa.evidence.arms import MODALITIES, TRANSFORMER, Modality, Sweep


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
    args = [
        "--config", str(root / modality.config),
        "--model.init_args.backbone", str(root / "configs" / "backbone" / f"{key.arm}.yaml"),
        "--model.init_args.optimizer.lr", str(key.lr),
        "--seed_everything", str(key.seed),
        "--data.init_args.train_fraction", str(key.fraction),
        "--data.init_args.batch_size", str(sweep.batch_size),
        "--data.init_args.seed", "0",  # splits and subsets stay fixed; the seed varies init and data order
        "--trainer.max_steps", str(sweep.steps),
        "--trainer.max_epochs", "-1",
        "--trainer.limit_val_batches", "0",
        "--trainer.logger", "false",
        "--trainer.enable_progress_bar", "false",
        "--trainer.enable_model_summary", "false",
        "--trainer.callbacks", "[]",
    ]  # fmt: skip
    if sweep.limit is not None:
        args += ["--data.init_args.limit", str(sweep.limit)]
    if sweep.quick:
        for name, value in modality.data_overrides.items():
            args += [f"--data.init_args.{name}", str(value)]
    return args


def run_one(root: Path, modality: Modality, key: RunKey, sweep: Sweep) -> dict[str, object]:
    """Train one arm for a fixed number of steps; evaluate the final weights on validation and test."""
    from tabrasa.cli import TabrasaCLI, trainer_defaults
    from tabrasa.data.datamodule import TabrasaDataModule
    from tabrasa.tasks.task import TokenTask

    scratch = tempfile.TemporaryDirectory(prefix="tabrasa-curve-")  # checkpoints of a run are not kept
    args = [*cli_args(root, modality, key, sweep), "--trainer.default_root_dir", scratch.name]
    defaults = {k: v for k, v in trainer_defaults().items() if k != "callbacks"}
    cli = TabrasaCLI(
        TokenTask, TabrasaDataModule, subclass_mode_model=True, subclass_mode_data=True,
        trainer_defaults=defaults, args=args, run=False, save_config_callback=None,
    )  # fmt: skip
    start = time.perf_counter()
    cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    seconds = time.perf_counter() - start
    cli.trainer.limit_val_batches = (
        1.0  # off during training (fixed steps, no selection), on for the final score
    )
    val = cli.trainer.validate(cli.model, datamodule=cli.datamodule, verbose=False)[0]
    test = cli.trainer.test(cli.model, datamodule=cli.datamodule, verbose=False)[0]
    scratch.cleanup()
    return {
        **asdict(key),
        "train_examples": len(cli.datamodule.splits["train"]),
        "params": sum(p.numel() for p in cli.model.backbone.parameters()),
        "val_acc": float(val["val/acc"]),
        "test_acc": float(test["test/acc"]),
        "test_f1": float(test["test/f1"]),
        "train_seconds": round(seconds, 2),
    }


class RunLog:
    """Append-only JSONL of finished runs: the resume point of a sweep."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.runs: dict[str, dict[str, object]] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    run = json.loads(line)
                    self.runs[
                        RunKey(**{k: run[k] for k in ("modality", "arm", "fraction", "lr", "seed")}).id()
                    ] = run

    def get(self, key: RunKey) -> dict[str, object] | None:
        return self.runs.get(key.id())

    def add(self, run: dict[str, object]) -> None:
        key = RunKey(**{k: run[k] for k in ("modality", "arm", "fraction", "lr", "seed")})  # type: ignore[arg-type]
        self.runs[key.id()] = run
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
    """The rate with the best validation accuracy at the first seed (ties: the smaller rate)."""
    scored = [(log.get(k)["val_acc"], -k.lr, k.lr) for k in sweep_keys(modality, arm, fraction, sweep)]  # type: ignore[index]
    return max(scored)[2]


def run_sweep(root: Path, names: list[str], sweep: Sweep, log: RunLog, echo: bool = True) -> None:
    for name in ("pytorch_lightning", "pytorch_lightning.utilities.rank_zero", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
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
                except TypeError:
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
