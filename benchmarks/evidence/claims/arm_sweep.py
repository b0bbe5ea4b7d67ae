"""The protocol every trained arm of a claim follows: a learning-rate sweep of its own, chosen on validation.

Each arm trains at every rate of `rates` at the first seed and keeps the rate with the best validation
score (ties: the smaller rate; a diverged run scores worst); the other seeds then train at that rate, and
the chosen rate's first-seed run is reused. Validation and test are separate fixed streams of the task
(`synthetic_training.HeldOut`); every run records its test accuracy, and the choice never reads it. One rate
for two arms would favour whichever arm it was tuned for (the long-range LSTM once trained at the
transformer's rate), so no arm borrows another's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from benchmarks.evidence.claims.run_cache import RunCache
from benchmarks.evidence.synthetic_training import HeldOut, History, Stage, Task, TrainConfig, train

RATES = (3e-4, 1e-3, 3e-3, 1e-2)

Score = Callable[[History], float]


def final_validation(history: History) -> float:
    """The default score: validation accuracy at the end of training."""
    return -math.inf if history.diverged else history.final_accuracy


@dataclass(frozen=True)
class RateChoice:
    """lr: the chosen rate. scores: each rate's validation score. runs: each rate's first-seed run."""

    lr: float
    scores: dict[float, float]
    runs: dict[float, History]


def choose_rate(train_at: Callable[[float], History], rates: Sequence[float], score: Score) -> RateChoice:
    """Train at every rate and keep the best validation score; the test curves are carried, never read."""
    if not rates or len(set(rates)) != len(rates) or min(rates) <= 0:
        raise ValueError(f"choose_rate rates={tuple(rates)}: give at least one positive rate, each once")
    runs = {lr: train_at(lr) for lr in rates}
    scores = {lr: score(history) for lr, history in runs.items()}
    best = max(rates, key=lambda lr: (scores[lr], -lr))
    return RateChoice(best, scores, runs)


@dataclass(frozen=True)
class ArmRuns:
    """One arm: its rate choice, and one run per seed at the chosen rate (the first is the sweep's).
    steps and batch: the whole budget of each run, curriculum stages included, which compared arms share."""

    choice: RateChoice
    histories: tuple[History, ...]
    steps: int
    batch: int

    @property
    def test(self) -> list[float]:
        return [h.final_test for h in self.histories]

    @property
    def correct(self) -> np.ndarray:
        """(seeds, test examples) 0/1: what `intervals.hierarchical_bootstrap` resamples."""
        return _stack([h.test_correct for h in self.histories])

    def stage_correct(self, stage: int) -> np.ndarray:
        """(seeds, examples) 0/1 on curriculum stage `stage`'s own test set, at that stage's end."""
        return _stack([h.stages[stage] for h in self.histories])

    def details(self) -> dict[str, Any]:
        """What claims.json records of the arm: the sweep, the choice, the budget, the per-seed test
        accuracy (and at the end of each curriculum stage, on that stage's test set)."""
        recorded = {
            "lr": self.choice.lr,
            "steps": self.steps,
            "batch": self.batch,
            "validation_by_lr": {f"{lr:g}": s for lr, s in self.choice.scores.items()},
            "test": self.test,
            "test_examples": self.correct.shape[1],
        }
        stages = min(len(h.stages) for h in self.histories)
        if stages:
            recorded["stage_test"] = [self.stage_correct(i).mean(axis=1).tolist() for i in range(stages)]
        return recorded


def _stack(outcomes: Sequence[torch.Tensor | None]) -> np.ndarray:
    if any(o is None for o in outcomes):
        raise ValueError("ArmRuns: a run has no test outcomes; train it with a test set")
    return np.stack([o.numpy().astype(np.float64) for o in outcomes if o is not None])


def fit_arm(
    build: Callable[[], nn.Module],
    task: Task,
    config: TrainConfig,
    seeds: Sequence[int],
    device: torch.device,
    rates: Sequence[float] = RATES,
    score: Score = final_validation,
    curriculum: Sequence[Stage] = (),
    cache: RunCache | None = None,
) -> ArmRuns:
    """Sweep `rates` at seeds[0], then train the other seeds at the chosen rate. `build` makes a fresh
    model; it is called right after torch.manual_seed(seed), so the seed fixes the initialisation.
    `config.lr` is replaced by each rate. A `curriculum` (`synthetic_training.train`) precedes `task` in
    every run; the rate is still chosen on `task`'s validation set. A `cache` returns runs it already
    holds instead of training them again, and keeps the others."""
    if not seeds:
        raise ValueError("fit_arm needs at least one seed")
    held_out = HeldOut.of(task, config)

    def run(lr: float, seed: int) -> History:
        if cache is not None and (kept := cache.get(lr, seed)) is not None:
            return kept
        torch.manual_seed(seed)
        config_at = replace(config, lr=lr)
        history = train(
            build(), task, config_at, seed, device, held_out.validation, held_out.test, curriculum
        )
        if cache is not None:
            cache.put(lr, seed, history)
        return history

    choice = choose_rate(lambda lr: run(lr, seeds[0]), rates, score)
    histories = (choice.runs[choice.lr], *(run(choice.lr, seed) for seed in seeds[1:]))
    steps = config.steps + sum(stage.steps for stage in curriculum)
    return ArmRuns(choice, histories, steps, config.batch)
