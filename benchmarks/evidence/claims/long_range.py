"""Claim: at sequence length 1,024 a transformer beats an LSTM by 27% accuracy on a task that needs the
first tokens at the end. Both read the answer at the last token; the LSTM has the transformer's total size
(the transformer's positions are sinusoidal, so there is no position table to match).

Each arm sweeps its own learning rate on validation (`arm_sweep`), and the LSTM gets more steps than the
transformer: a recurrence must carry the label across ~1,000 noise tokens, and the baseline is given every
chance to leave chance before the gap is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from benchmarks.evidence.claims.arm_sweep import RATES, fit_arm
from benchmarks.evidence.intervals import mean_interval
from benchmarks.evidence.models import Shape, count_parameters, matched_lstm
from benchmarks.evidence.probe import ProbeModel
from benchmarks.evidence.report import ClaimResult, basis, judge, span, untrained
from benchmarks.evidence.synthetic_tasks import FirstTokensTask
from benchmarks.evidence.synthetic_training import TrainConfig

CLAIM = "long-range dependency at N=1,024: transformer vs LSTM of equal size"
ARTICLE = "+27% accuracy (read as points)"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """train / lstm_train: each arm's budget (their lr is replaced by the arm's chosen rate)."""

    task: FirstTokensTask = field(default_factory=lambda: FirstTokensTask(length=1024, signal=32))
    shape: Shape = field(default_factory=lambda: Shape(dim=32, depth=2, heads=2, positions="sinusoidal"))
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=150, batch=16))
    lstm_train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=300, batch=16))
    rates: tuple[float, ...] = RATES


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task, shape = settings.task, settings.shape

    def transformer() -> ProbeModel:
        return ProbeModel(shape.encoder(task.length), task.vocab_size, task.classes)

    def lstm() -> ProbeModel:
        return ProbeModel(matched_lstm(shape.encoder(task.length)), task.vocab_size, task.classes)

    builds = {"transformer": transformer, "LSTM": lstm}
    budgets = {"transformer": settings.train, "LSTM": settings.lstm_train}
    arms = {
        name: fit_arm(build, task, budgets[name], seeds, device, settings.rates)
        for name, build in builds.items()
    }
    sizes = {name: count_parameters(build()) for name, build in builds.items()}
    accuracy = {name: arm.test for name, arm in arms.items()}
    gaps = [100 * (t - r) for t, r in zip(accuracy["transformer"], accuracy["LSTM"], strict=True)]
    gap = mean_interval(gaps)
    verdict = untrained(accuracy, chance=1 / task.classes) or judge(gap, 27.0, 27.0, null=0.0)
    described = "; ".join(
        f"{name} {span(mean_interval(accuracy[name]), 1, '%', scale=100)} at lr {arm.choice.lr:g}, "
        f"{arm.steps} steps"
        for name, arm in arms.items()
    )
    measured = (
        f"{span(gap, 1, ' points', sign='+')} ({described}; chance {100 / task.classes:.0f}%; "
        f"{sizes['transformer']:,} vs {sizes['LSTM']:,} params in total; {basis(len(seeds))})"
    )
    details = {
        "arms": {name: arm.details() for name, arm in arms.items()},
        "gap_points": gaps,
        "parameters_total": sizes,
        "lstm_layers": matched_lstm(shape.encoder(task.length)).lstm.num_layers,
    }
    return ClaimResult.of("long_range", CLAIM, ARTICLE, measured, verdict, details)
