"""Claim: at sequence length 1,024 a transformer beats an LSTM by 27% accuracy on a task that needs the
first tokens at the end. Both read the answer at the last token; the LSTM has the transformer's total size
(the transformer's positions are sinusoidal, so there is no position table to match).

A recurrence trained at N=1,024 from the start never left chance: its gradient must cross ~1,000 noise
tokens before it learns to hold the label at all. Both arms therefore follow one length curriculum (the
task at N=64, then 256, then 1,024, one run and one schedule; Bengio et al. 2009; Zaremba & Sutskever 2014
for sequence length), with the same steps and batch, and each sweeps its own learning rate on validation
at the last length (`arm_sweep`). The LSTM's forget gates start at bias `lstm_forget_bias`
(`models.set_forget_bias`): at PyTorch's default, near 0, it did not leave chance even at N=64. Every
stage's test accuracy is recorded, so the table shows where each arm leaves chance; if the LSTM has not
at N=1,024, the row says so and judges the longest length at which both arms trained.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from benchmarks.evidence.claims.arm_sweep import RATES, ArmRuns, fit_arm
from benchmarks.evidence.intervals import hierarchical_bootstrap
from benchmarks.evidence.models import Shape, count_parameters, matched_lstm, set_forget_bias
from benchmarks.evidence.probe import ProbeModel
from benchmarks.evidence.report import ClaimResult, Judgement, bootstrap_basis, judge, span, untrained
from benchmarks.evidence.synthetic_tasks import FirstTokensTask
from benchmarks.evidence.synthetic_training import Stage, TrainConfig

CLAIM = "long-range dependency at N=1,024: transformer vs LSTM of equal size"
ARTICLE = "+27% accuracy (read as points)"
NAMES = ("transformer", "LSTM")


@dataclass(frozen=True, kw_only=True)
class Settings:
    """task: the measured task (its length is the claim's N). curriculum: (length, steps) of the shorter
    copies of the task both arms train on first, in order. train: the last stage's budget, at task.length;
    its batch is every stage's (its lr is replaced by each arm's chosen rate). lstm_forget_bias: the LSTM's
    initial forget-gate bias."""

    task: FirstTokensTask = field(default_factory=lambda: FirstTokensTask(length=1024, signal=32))
    curriculum: tuple[tuple[int, int], ...] = ((64, 300), (256, 300))
    shape: Shape = field(default_factory=lambda: Shape(dim=32, depth=2, heads=2, positions="sinusoidal"))
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=200, batch=16))
    rates: tuple[float, ...] = RATES
    lstm_forget_bias: float = 3.0

    def __post_init__(self) -> None:
        lengths = [length for length, _ in self.curriculum] + [self.task.length]
        if lengths != sorted(set(lengths)) or lengths[0] <= self.task.signal:
            raise ValueError(
                f"long_range curriculum lengths {lengths[:-1]} must rise, stay below task.length="
                f"{self.task.length} and exceed task.signal={self.task.signal}"
            )

    def stages(self) -> list[Stage]:
        return [Stage(task=replace(self.task, length=n), steps=s) for n, s in self.curriculum]

    @property
    def lengths(self) -> list[int]:
        return [length for length, _ in self.curriculum] + [self.task.length]


def _at_length(arms: dict[str, ArmRuns], stage: int, last: bool) -> dict[str, np.ndarray]:
    """Each arm's (seeds, examples) test outcomes at the end of curriculum stage `stage` (or at the end)."""
    return {name: arm.correct if last else arm.stage_correct(stage) for name, arm in arms.items()}


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task, shape, chance = settings.task, settings.shape, 1 / settings.task.classes

    def transformer() -> ProbeModel:
        return ProbeModel(shape.encoder(task.length), task.vocab_size, task.classes)

    def lstm() -> ProbeModel:
        recurrence = set_forget_bias(matched_lstm(shape.encoder(task.length)), settings.lstm_forget_bias)
        return ProbeModel(recurrence, task.vocab_size, task.classes)

    builds = dict(zip(NAMES, (transformer, lstm), strict=True))
    arms = {
        name: fit_arm(
            build, task, settings.train, seeds, device, settings.rates, curriculum=settings.stages()
        )
        for name, build in builds.items()
    }
    sizes = {name: count_parameters(build()) for name, build in builds.items()}
    lengths = settings.lengths
    per_length, judgements = {}, []
    for i, n in enumerate(lengths):
        correct = _at_length(arms, i, last=n == task.length)
        gap = hierarchical_bootstrap(correct, lambda a: 100 * (a["transformer"] - a["LSTM"]))
        accuracy = {name: hierarchical_bootstrap(correct, lambda a, k=name: a[k]) for name in NAMES}
        seed_means = {name: c.mean(axis=1).tolist() for name, c in correct.items()}
        judgements.append(untrained(seed_means, chance) or judge(gap, 27.0, 27.0, null=0.0))
        per_length[n] = (gap, accuracy, seed_means)
    verdict = _verdict(lengths, judgements)
    measured_at = _measured_length(lengths, judgements)
    gap, accuracy, _ = per_length[measured_at]
    steps = "+".join(str(s) for _, s in settings.curriculum) + f"+{settings.train.steps}"
    described = "; ".join(
        f"{name} {span(accuracy[name], 1, '%', scale=100)} at lr {arms[name].choice.lr:g}" for name in NAMES
    )
    stages = "; ".join(
        f"{name} " + " → ".join(f"{100 * np.mean(per_length[n][2][name]):.1f}%" for n in lengths)
        for name in NAMES
    )
    examples = arms["transformer"].correct.shape[1]
    intervals = bootstrap_basis(len(seeds), examples)
    where = "" if measured_at == task.length else f" (at N={measured_at:,}, not {task.length:,}: see verdict)"
    measured = (
        f"{span(gap, 1, ' points', sign='+')}{where} ({described}); both arms on one curriculum "
        f"N={'→'.join(f'{n:,}' for n in lengths)}, {steps} = {arms['LSTM'].steps:,} steps of "
        f"{settings.train.batch}; LSTM forget bias {settings.lstm_forget_bias:g} at init; test accuracy at "
        f"each stage's end: {stages}; chance {100 * chance:.0f}%; "
        f"{sizes['transformer']:,} vs {sizes['LSTM']:,} params in total; {intervals}"
    )
    details = {
        "arms": {name: arm.details() for name, arm in arms.items()},
        "lengths": lengths,
        "by_length": {
            str(n): {
                "gap_points": [gap.mean, gap.low, gap.high],
                "accuracy": {k: [a.mean, a.low, a.high] for k, a in acc.items()},
                "accuracy_by_seed": means,
                "verdict": j.verdict,
                "reason": j.reason,
            }
            for (n, (gap, acc, means)), j in zip(per_length.items(), judgements, strict=True)
        },
        "verdict_at_length": measured_at,
        "parameters_total": sizes,
        "lstm_layers": matched_lstm(shape.encoder(task.length)).lstm.num_layers,
    }
    return ClaimResult.of("long_range", CLAIM, ARTICLE, measured, verdict, details)


def _measured_length(lengths: Sequence[int], judgements: Sequence[Judgement]) -> int:
    """The claim's length if both arms trained there, else the longest length at which both did (the
    claim's length again when there is none: its row then has no verdict)."""
    trained = [n for n, j in zip(lengths, judgements, strict=True) if j.verdict != "no verdict"]
    return lengths[-1] if not trained or judgements[-1].verdict != "no verdict" else trained[-1]


def _verdict(lengths: Sequence[int], judgements: Sequence[Judgement]) -> Judgement:
    """The verdict at the claim's length; where an arm never trained there, the verdict at the longest
    length at which both arms did, saying plainly that it is not the claim's length."""
    last = judgements[-1]
    at = _measured_length(lengths, judgements)
    if last.verdict != "no verdict" or at == lengths[-1]:
        return last
    there = judgements[list(lengths).index(at)]
    return Judgement(
        there.verdict,
        f"at N={lengths[-1]:,} {last.reason}, so no verdict there; at N={at:,}, the longest length at "
        f"which both arms trained: {there.reason}",
    )
