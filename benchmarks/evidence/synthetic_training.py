"""The one training loop of the synthetic benchmarks (the claims, ListOps), with the project's optimiser,
weight-decay rule and schedule.

Written by hand rather than through Lightning: the claims run thousands of tiny steps on a synthetic
stream, where a Trainer's per-step hooks and logging would cost more than the model and blur timings.
Benchmarks on real datasets do not use it: they train through `cli_run.fit_and_score`, as `tabrasa fit`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, get_args

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.evidence.probe import Batch
from benchmarks.speed import Precision, autocast
from tabrasa.tasks.schedule import OptimConfig, warmup_cosine
from tabrasa.tasks.weight_decay import param_groups

HELD_OUT_SEED = 1_000_003  # offsets evaluation streams far from the small training seeds
# Fixed streams of their own, far from the training seeds and from each other: validation chooses a learning
# rate, test is only reported. Fixed seeds, so every arm and seed of a task is scored on the same examples.
VALIDATION_SEED = 2_000_003
TEST_SEED = 3_000_017
# Test sets are drawn in batches of this many examples, whatever the training batch: large enough to
# amortise the LSTM's per-time-step loop, small enough for attention's (N, N) scores at N=1,024.
EVAL_BATCH = 64


class Task(Protocol):
    def sample(self, batch_size: int, generator: torch.Generator) -> Batch: ...


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """steps: optimiser steps. batch: examples per step. lr: AdamW peak rate (5% warmup, cosine decay).
    eval_every: steps between held-out evaluations (0: only at the end). eval_batches: validation batches
    (of `batch` examples) per eval. test_examples: the test set's size (at least; whole EVAL_BATCH
    batches): reported accuracies rest on it, so it is large where evaluation is cheap and training is not.
    precision: autocast precision of forward passes, in training and evaluation."""

    steps: int
    batch: int
    lr: float = 1e-3
    eval_every: int = 0
    eval_batches: int = 4
    test_examples: int = 1024
    weight_decay: float = 0.0
    clip: float = 1.0
    precision: Precision = "fp32"

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "eval_batches", "test_examples"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"TrainConfig.{name}={getattr(self, name)} must be >= 1: set a positive count"
                )
        if self.eval_every < 0:
            raise ValueError(f"TrainConfig.eval_every={self.eval_every}: use 0 to evaluate only at the end")
        if self.lr <= 0 or self.weight_decay < 0 or self.clip <= 0:
            raise ValueError(
                f"TrainConfig lr={self.lr}, weight_decay={self.weight_decay}, clip={self.clip}: lr and clip "
                "must be > 0, weight_decay >= 0"
            )
        if self.precision not in get_args(Precision):
            raise ValueError(f"TrainConfig.precision={self.precision!r}: choose one of {get_args(Precision)}")


@dataclass
class History:
    """losses: training loss per step. evals: (step, held-out accuracy) pairs on the evaluation set (the
    validation set, where there is a test set as well). tests: (step, test accuracy) at the same steps,
    when a test set was given. test_correct: which test examples the last evaluation got right (the
    per-example outcomes a bootstrap resamples). stages: at the end of each stage of a curriculum, the
    stage's test outcomes (`Stage`). diverged: a loss went NaN or infinite and training stopped there.
    seconds: wall time of the training steps (not the evaluations)."""

    losses: list[float] = field(default_factory=list)
    evals: list[tuple[int, float]] = field(default_factory=list)
    tests: list[tuple[int, float]] = field(default_factory=list)
    test_correct: torch.Tensor | None = None
    stages: list[torch.Tensor] = field(default_factory=list)
    diverged: bool = False
    seconds: float = 0.0

    @property
    def final_accuracy(self) -> float:
        return self.evals[-1][1] if self.evals else float("nan")

    @property
    def final_test(self) -> float:
        return self.tests[-1][1] if self.tests else float("nan")


@dataclass(frozen=True)
class HeldOut:
    """validation: the examples that choose a learning rate; test: the examples that are reported."""

    validation: list[Batch]
    test: list[Batch]

    @classmethod
    def of(cls, task: Task, config: TrainConfig) -> HeldOut:
        """`config.eval_batches` batches of `config.batch` from the fixed validation stream, and
        `config.test_examples` (rounded up to whole EVAL_BATCH batches) from the fixed test stream."""
        validation = itertools.islice(stream(task, config.batch, VALIDATION_SEED), config.eval_batches)
        return cls(list(validation), draw_test(task, config))


def draw_test(task: Task, config: TrainConfig) -> list[Batch]:
    """`config.test_examples` examples (rounded up to whole EVAL_BATCH batches) of the fixed test stream."""
    return list(itertools.islice(stream(task, EVAL_BATCH, TEST_SEED), -(-config.test_examples // EVAL_BATCH)))


@torch.no_grad()
def outcomes(
    model: nn.Module, batches: Sequence[Batch], device: torch.device, precision: Precision = "fp32"
) -> torch.Tensor:
    """(examples,) bool: which examples the model answers right, in the batches' order."""
    model.eval()
    right = []
    for batch in batches:
        batch = batch.to(device)
        with autocast(precision, device):
            logits = model(batch)
        right.append((logits.argmax(dim=-1) == batch.label).cpu())
    model.train()
    return torch.cat(right)


def accuracy(
    model: nn.Module, batches: Sequence[Batch], device: torch.device, precision: Precision = "fp32"
) -> float:
    return outcomes(model, batches, device, precision).float().mean().item()


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One stage of a curriculum: `steps` optimiser steps on `task`, before the measured task."""

    task: Task
    steps: int

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError(f"Stage.steps={self.steps} must be >= 1: drop a stage rather than give it none")


def train_batches(
    model: nn.Module,
    batches: Iterable[Batch],
    config: TrainConfig,
    device: torch.device,
    eval_set: Sequence[Batch],
    test_set: Sequence[Batch] | None = None,
    milestones: Mapping[int, Sequence[Batch]] | None = None,
) -> History:
    """Take `config.steps` batches from `batches`, one optimiser step each; evaluate on `eval_set` (and on
    `test_set`, read only for reporting) every `eval_every` steps and at the end; after each step named in
    `milestones`, record the outcomes on its batches in `history.stages`."""
    model.to(device).train()
    optimizer = torch.optim.AdamW(param_groups(model, config.weight_decay), lr=config.lr)
    scheduler = warmup_cosine(
        optimizer, config.steps, OptimConfig(lr=config.lr, weight_decay=config.weight_decay)
    )
    history = History()
    for step, batch in enumerate(itertools.islice(batches, config.steps), start=1):
        start = time.perf_counter()
        batch = batch.to(device)
        with autocast(config.precision, device):
            logits = model(batch)
        loss = F.cross_entropy(logits.float(), batch.label)
        if not torch.isfinite(loss):
            history.diverged = True
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimizer.step()
        scheduler.step()
        history.losses.append(loss.item())
        history.seconds += time.perf_counter() - start
        if config.eval_every and step % config.eval_every == 0:
            _evaluate(history, step, model, eval_set, test_set, device, config.precision)
        if milestones and step in milestones:
            history.stages.append(outcomes(model, milestones[step], device, config.precision))
    if not history.evals or history.evals[-1][0] != len(history.losses):
        _evaluate(history, len(history.losses), model, eval_set, test_set, device, config.precision)
    return history


def _evaluate(
    history: History,
    step: int,
    model: nn.Module,
    eval_set: Sequence[Batch],
    test_set: Sequence[Batch] | None,
    device: torch.device,
    precision: Precision,
) -> None:
    history.evals.append((step, accuracy(model, eval_set, device, precision)))
    if test_set is not None:
        history.test_correct = outcomes(model, test_set, device, precision)
        history.tests.append((step, history.test_correct.float().mean().item()))


def stream(task: Task, batch_size: int, seed: int) -> Iterator[Batch]:
    """Fresh batches from `task` forever, fixed by `seed`."""
    generator = torch.Generator().manual_seed(seed)
    while True:
        yield task.sample(batch_size, generator)


def epochs(batches: Sequence[Batch], seed: int) -> Iterator[Batch]:
    """A fixed list of batches, reshuffled every epoch, forever: a finite dataset as a stream."""
    generator = torch.Generator().manual_seed(seed)
    while True:
        for i in torch.randperm(len(batches), generator=generator).tolist():
            yield batches[i]


def train(
    model: nn.Module,
    task: Task,
    config: TrainConfig,
    seed: int,
    device: torch.device,
    eval_set: list[Batch] | None = None,
    test_set: list[Batch] | None = None,
    curriculum: Sequence[Stage] = (),
) -> History:
    """Train on fresh batches from `task` (seeded by `seed`), evaluating on `eval_set` (by default
    `eval_batches` batches from a held-out stream of its own, never a training stream of another seed) and
    on `test_set` if given.

    A `curriculum` trains its stages first, in order, then `config.steps` on `task`: one run of
    sum(stage steps) + config.steps steps under one optimiser and one warmup-cosine schedule, the stream
    switching task at each stage's end, where the stage's own test set (`draw_test(stage.task, config)`) is
    scored into `history.stages`."""
    if eval_set is None:
        held_out = stream(task, config.batch, HELD_OUT_SEED + seed)
        eval_set = list(itertools.islice(held_out, config.eval_batches))
    parts = [*curriculum, Stage(task=task, steps=config.steps)]
    batches = itertools.chain.from_iterable(
        itertools.islice(stream(part.task, config.batch, seed), part.steps) for part in parts
    )
    ends = list(itertools.accumulate(part.steps for part in parts))
    stage_tests = (draw_test(stage.task, config) for stage in curriculum)
    milestones = dict(zip(ends[:-1], stage_tests, strict=True))
    total = replace(config, steps=ends[-1])
    return train_batches(model, batches, total, device, eval_set, test_set, milestones)
