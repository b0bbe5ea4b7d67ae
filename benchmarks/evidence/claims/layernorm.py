"""Claim: without LayerNorm a transformer converges about 3× slower. Measured as the number of steps until
held-out accuracy on associative recall first reaches a threshold, with LayerNorm and with norm="none"
(every block norm and the final norm removed; the task head keeps its own LayerNorm in both).

Each arm sweeps its own learning rate (`arm_sweep`), choosing the one that reaches the threshold soonest on
the validation stream; the steps reported are read on the test stream, evaluated at the same steps."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import torch

from benchmarks.evidence.claims.arm_sweep import RATES, fit_arm
from benchmarks.evidence.intervals import mean_interval
from benchmarks.evidence.models import Shape, count_parameters
from benchmarks.evidence.probe import ProbeModel
from benchmarks.evidence.report import ClaimResult, Judgement, basis, judge, span, untrained
from benchmarks.evidence.synthetic_tasks import RecallTask
from benchmarks.evidence.synthetic_training import History, TrainConfig

CLAIM = "no LayerNorm vs LayerNorm: steps to converge"
ARTICLE = "about 3× slower without"
NAMES = {"layernorm": "LayerNorm", "none": "no LayerNorm"}

Curve = Sequence[tuple[int, float]]


@dataclass(frozen=True, kw_only=True)
class Settings:
    """train: both arms' budget (its lr is replaced by each arm's chosen rate)."""

    task: RecallTask = field(default_factory=RecallTask)
    shape: Shape = field(default_factory=lambda: Shape(dim=64, depth=2, heads=4))
    threshold: float = 0.9  # held-out accuracy that counts as converged
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=1500, batch=64, eval_every=25))
    rates: tuple[float, ...] = RATES

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"layernorm threshold={self.threshold} must be an accuracy in (0, 1]")


def steps_to(curve: Curve, threshold: float) -> int | None:
    """The first evaluated step whose accuracy reaches the threshold; None if none did."""
    return next((step for step, acc in curve if acc >= threshold), None)


def converges_soonest(threshold: float) -> Callable[[History], float]:
    """The arms' rate score: fewest steps to the threshold on validation; among rates that never reach
    it, the best final validation accuracy ranks next (every such score is below every reaching one)."""

    def score(history: History) -> float:
        if history.diverged:
            return -math.inf
        reached = steps_to(history.evals, threshold)
        if reached is not None:
            return -float(reached)
        return -(len(history.losses) + 2 - history.final_accuracy)

    return score


def ratio_verdict(ratios: Sequence[float], censored: bool, budget: int) -> Judgement:
    """The rule on the ratios; a censored ratio (a run without LayerNorm that never converged counts its
    budget) is a lower bound, which can show "larger" but neither a match nor a shortfall."""
    verdict = judge(mean_interval(ratios), 3.0, 3.0, null=1.0)
    if not censored or (verdict.verdict == "different size" and "larger" in verdict.reason):
        return verdict
    return Judgement(
        "inconclusive",
        f"runs without LayerNorm did not converge in {budget} steps: the ratio is a lower bound",
    )


def _model(settings: Settings, norm: str) -> ProbeModel:
    task = settings.task
    return ProbeModel(settings.shape.encoder(task.length, norm=norm), task.vocab_size, task.classes)


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task, budget, threshold = settings.task, settings.train.steps, settings.threshold
    score = converges_soonest(threshold)
    arms = {
        norm: fit_arm(
            partial(_model, settings, norm), task, settings.train, seeds, device, settings.rates, score
        )
        for norm in NAMES
    }
    steps = {norm: [steps_to(h.tests, threshold) for h in arm.histories] for norm, arm in arms.items()}
    details = {
        "arms": {norm: arm.details() for norm, arm in arms.items()},
        "steps_to_threshold": steps,
        "test_curves": {norm: [h.tests for h in arm.histories] for norm, arm in arms.items()},
        "parameters_total": {norm: count_parameters(_model(settings, norm)) for norm in NAMES},
    }
    reached = [(ln, no) for ln, no in zip(steps["layernorm"], steps["none"], strict=True) if ln is not None]
    # A run without LayerNorm that never reaches the threshold converges in more than the budget: its
    # ratio is a lower bound, budget / steps_with_layernorm.
    ratios = [(no if no is not None else budget) / ln for ln, no in reached]
    void = untrained({NAMES[n]: arm.test for n, arm in arms.items()}, chance=1 / task.classes)
    if void is None and not ratios:
        void = Judgement("no verdict", f"LayerNorm never reached {threshold:.0%} in {budget} steps")
    censored = any(no is None for _, no in reached)
    verdict = void or ratio_verdict(ratios, censored, budget)
    sizes = details["parameters_total"]
    rates = ", ".join(f"{NAMES[n]} lr {arm.choice.lr:g}" for n, arm in arms.items())
    ratio = (
        f"{'≥ ' if censored else ''}{span(mean_interval(ratios), 2, '×')} slower" if ratios else "no ratio"
    )
    measured = (
        f"{ratio} (steps to {threshold:.0%} on test: LayerNorm {_show(steps['layernorm'])}, none "
        f"{_show(steps['none'])} of {settings.train.test_examples:,} test examples; budget {budget} steps "
        f"of {settings.train.batch} in both arms; {rates}; {sizes['layernorm']:,} vs {sizes['none']:,} "
        f"params in total; steps ratio: {basis(len(ratios))})"
    )
    return ClaimResult.of("layernorm", CLAIM, ARTICLE, measured, verdict, details)


def _show(values: Sequence[int | None]) -> str:
    return "/".join("never" if v is None else str(v) for v in values)
