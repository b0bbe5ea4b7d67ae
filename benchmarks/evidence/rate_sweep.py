"""What the learning-curve and transfer benchmarks share: a budget, the CLI overrides it sets, a resumable
log of finished runs, and the protocol that chooses each arm's learning rate.

The protocol: every rate of the budget runs at the first seed; the rate with the best *validation*
accuracy is chosen; the other seeds then run at that rate. Test accuracy is read only for reporting. With
`bracket` > 0, a best rate at either end of the list is not trusted: one more rate, `BRACKET_FACTOR` beyond
that end, runs at the first seed, up to `bracket` times, so the chosen rate has a worse rate on each side.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

BRACKET_FACTOR = 3.0  # the budgets' rates are spaced by about 3 (1e-3, 3e-3, ...); extensions keep that


@dataclass(frozen=True, kw_only=True)
class Budget:
    """learning_rates: the rates each arm is swept over. seeds: the first chooses the rate, all report.
    steps: optimizer steps per run, equal for every arm. limit: examples kept per split (None = all).
    batch_size: examples per step. quick: apply the CPU-sized data overrides. bracket: how many rates the
    sweep may add beyond an end of `learning_rates` when the best is there (0: the list as given)."""

    learning_rates: tuple[float, ...]
    seeds: tuple[int, ...]
    steps: int
    limit: int | None
    batch_size: int
    quick: bool
    bracket: int = 0

    def __post_init__(self) -> None:
        name = type(self).__name__
        if not self.learning_rates or min(self.learning_rates) <= 0:
            raise ValueError(f"{name}.learning_rates={self.learning_rates}: give at least one rate > 0")
        if len(set(self.learning_rates)) != len(self.learning_rates):
            raise ValueError(f"{name}.learning_rates={self.learning_rates} repeats a rate: list each once")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"{name}.seeds={self.seeds}: give at least one seed, each once")
        for field_name in ("steps", "batch_size"):
            if getattr(self, field_name) < 1:
                raise ValueError(f"{name}.{field_name}={getattr(self, field_name)} must be >= 1")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"{name}.limit={self.limit} must be >= 1, or None for every example")
        check_bracket(self)

    def cli_args(self, lr: float, seed: int) -> list[str]:
        """The overrides every run of this budget adds to its modality's config."""
        # Splits and subsets stay fixed (data seed 0); the run's seed varies initialisation and data order.
        args = [
            "--model.init_args.optimizer.lr", str(lr),
            "--seed_everything", str(seed),
            "--data.init_args.loader.batch_size", str(self.batch_size),
            "--data.init_args.seed", "0",
            "--trainer.max_steps", str(self.steps),
        ]  # fmt: skip
        if self.limit is not None:
            args += ["--data.init_args.limit", str(self.limit)]
        return args


def check_bracket(budget: RateProtocol) -> None:
    name = type(budget).__name__
    if budget.bracket < 0:
        raise ValueError(f"{name}.bracket={budget.bracket} must be >= 0")
    if budget.bracket and len(budget.learning_rates) < 2:
        raise ValueError(
            f"{name}.bracket={budget.bracket} needs at least two learning_rates to see which way to extend"
        )


class RateProtocol(Protocol):
    """What the rate protocol reads of a budget: the rates to sweep, the seeds (the first chooses) and how
    many rates it may add to bracket the best."""

    @property
    def learning_rates(self) -> tuple[float, ...]: ...

    @property
    def seeds(self) -> tuple[int, ...]: ...

    @property
    def bracket(self) -> int: ...


class RunKey(Protocol):
    """A frozen dataclass naming one run; the protocol varies only `lr` and `seed`."""

    lr: float
    seed: int


class RunLog:
    """Append-only JSONL of finished runs, keyed by `key_fields`: the resume point of a sweep."""

    def __init__(self, path: Path | None, key_fields: tuple[str, ...]) -> None:
        self.path = path
        self.key_fields = key_fields
        self.runs: dict[str, dict[str, Any]] = {}
        self.refresh()

    @classmethod
    def of_runs(cls, runs: Iterable[dict[str, Any]], key_fields: tuple[str, ...]) -> RunLog:
        """Finished runs as a log that no file backs (a report's view of them): adding to it raises."""
        log = cls(None, key_fields)
        log.runs = {log._id(run): run for run in runs}
        return log

    def refresh(self) -> None:
        """Read what other processes appended since (a log may be shared by several)."""
        if self.path is not None and self.path.exists():
            text = self.path.read_text()
            for line in text[: text.rfind("\n") + 1].splitlines():  # a line still being written waits
                if line.strip():
                    run = json.loads(line)
                    self.runs[self._id(run)] = run

    def _id(self, values: dict[str, Any]) -> str:
        return "/".join(
            f"{values[f]:g}" if isinstance(values[f], float) else str(values[f]) for f in self.key_fields
        )

    def name(self, key: object) -> str:
        return self._id(asdict(key))  # type: ignore[call-overload]

    def get(self, key: RunKey) -> dict[str, Any] | None:
        return self.runs.get(self._id(asdict(key)))  # type: ignore[call-overload]

    def add(self, run: dict[str, Any]) -> None:
        if self.path is None:
            raise ValueError(
                "this run log is a view of finished runs (RunLog.of_runs): give it a file to add"
            )
        self.runs[self._id(run)] = run
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as handle:
            handle.write(json.dumps(run) + "\n")
            handle.flush()

    def best_rate(self, keys: Sequence[RunKey]) -> float:
        """Of runs that differ only in `lr`, the rate with the best validation accuracy (ties: the smaller
        rate). Test accuracy is never read. LookupError if one has not run yet."""
        scored = []
        for key in keys:
            run = self.get(key)
            if run is None:
                raise LookupError(f"{self._id(asdict(key))} has not run yet")  # type: ignore[call-overload]
            scored.append((float(run["val_acc"]), -key.lr, key.lr))
        return max(scored)[2]


def rate_keys(arm: RunKey, budget: RateProtocol, rates: Sequence[float] | None = None) -> list[RunKey]:
    """The runs that choose the arm's rate: every rate (the budget's, or `rates`) at the first seed."""
    chosen = budget.learning_rates if rates is None else rates
    return [replace(arm, lr=lr, seed=budget.seeds[0]) for lr in chosen]  # type: ignore[type-var]


def swept_rates(
    arm: RunKey, budget: RateProtocol, log: RunLog, train: Callable[[RunKey], None] | None = None
) -> list[float] | None:
    """The rates the arm's sweep runs at the first seed, in increasing order: the budget's, then while the
    best by validation is the smallest (largest) and `budget.bracket` allows, one more rate a factor of
    BRACKET_FACTOR below (above) it. A missing run is trained with `train`; without one, None means the
    sweep has not finished. The extensions are a function of validation accuracy only, so replaying the
    log gives the same list."""
    rates = sorted(budget.learning_rates)
    for extension in range(budget.bracket + 1):
        keys = rate_keys(arm, budget, rates)
        for key in keys:
            if log.get(key) is None:
                if train is None:
                    return None
                train(key)
        if extension == budget.bracket:
            break
        best = log.best_rate(keys)
        if best == rates[0]:
            rates.insert(0, rates[0] / BRACKET_FACTOR)
        elif best == rates[-1]:
            rates.append(rates[-1] * BRACKET_FACTOR)
        else:
            break
    return rates


def is_bracketed(rates: Sequence[float], best: float) -> bool:
    """Whether the chosen rate has a swept rate on each side (so the sweep's optimum is inside it)."""
    return min(rates) < best < max(rates)


def run_arm(
    arm: RunKey,
    budget: RateProtocol,
    log: RunLog,
    train: Callable[[RunKey], dict[str, Any]],
    echo: Callable[[RunKey, dict[str, Any]], None] | None = None,
) -> None:
    """Run what is missing of one arm (its `lr` and `seed` are placeholders): the rate sweep at the first
    seed, then the other seeds at the chosen rate. Each finished run is logged at once, so a killed sweep
    resumes where it stopped."""

    def run_if_missing(key: RunKey) -> None:
        if log.get(key) is None:
            run = {**asdict(key), **train(key)}  # type: ignore[call-overload]
            log.add(run)
            if echo is not None:
                echo(key, run)

    rates = swept_rates(arm, budget, log, run_if_missing)
    assert rates is not None  # every missing run was trained
    best = log.best_rate(rate_keys(arm, budget, rates))
    for seed in budget.seeds[1:]:
        run_if_missing(replace(arm, lr=best, seed=seed))  # type: ignore[type-var]


@dataclass(frozen=True, kw_only=True)
class ArmResult:
    """One arm at its chosen rate: the rate, its runs over the seeds that finished, and test accuracy;
    `rates` are every rate its sweep ran."""

    lr: float
    runs: tuple[dict[str, Any], ...]
    test_mean: float
    test_std: float
    rates: tuple[float, ...] = ()

    @property
    def bracketed(self) -> bool:
        return is_bracketed(self.rates, self.lr)


def arm_result(arm: RunKey, budget: RateProtocol, log: RunLog) -> ArmResult | None:
    """The arm's chosen rate and its finished runs at that rate; None while its rate sweep is unfinished."""
    rates = swept_rates(arm, budget, log)
    if rates is None:
        return None
    lr = log.best_rate(rate_keys(arm, budget, rates))
    found = (log.get(replace(arm, lr=lr, seed=s)) for s in budget.seeds)  # type: ignore[type-var]
    runs = tuple(r for r in found if r is not None)
    accs = [float(r["test_acc"]) for r in runs]
    std = statistics.stdev(accs) if len(accs) > 1 else 0.0
    return ArmResult(lr=lr, runs=runs, test_mean=statistics.mean(accs), test_std=std, rates=tuple(rates))


def print_run(key: RunKey, run: dict[str, Any]) -> None:
    fields = "/".join(f"{v:g}" if isinstance(v, float) else str(v) for v in asdict(key).values())  # type: ignore[call-overload]
    print(
        f"{fields:45s} val {run['val_acc']:.3f} test {run['test_acc']:.3f} ({run['train_seconds']}s)",
        flush=True,
    )
