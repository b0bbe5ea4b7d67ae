"""Claim: without LayerNorm a transformer converges about 3× slower. Measured as the number of steps until
held-out accuracy on associative recall first reaches a threshold, with LayerNorm and with norm="none"
(every block norm and the final norm removed; the task head keeps its own LayerNorm in both)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from tabrasa.evidence.models import Shape
from tabrasa.evidence.probe import ProbeModel
from tabrasa.evidence.report import ClaimResult, Judgement, Spread, judge
from tabrasa.evidence.synthetic_tasks import RecallTask
from tabrasa.evidence.synthetic_training import History, TrainConfig, train

CLAIM = "no LayerNorm vs LayerNorm: steps to converge"
ARTICLE = "about 3× slower without"


@dataclass(frozen=True, kw_only=True)
class Settings:
    task: RecallTask = field(default_factory=RecallTask)
    shape: Shape = field(default_factory=lambda: Shape(dim=64, depth=2, heads=4))
    threshold: float = 0.9  # held-out accuracy that counts as converged
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(steps=1500, batch=64, lr=2e-3, eval_every=25)
    )

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"layernorm threshold={self.threshold} must be an accuracy in (0, 1]")


def steps_to(history: History, threshold: float) -> int | None:
    """The first evaluated step whose held-out accuracy reaches the threshold; None if none did."""
    return next((step for step, acc in history.evals if acc >= threshold), None)


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task, budget = settings.task, settings.train.steps
    steps: dict[str, list[int | None]] = {"layernorm": [], "none": []}
    curves: dict[str, list[list[tuple[int, float]]]] = {"layernorm": [], "none": []}
    for seed in seeds:
        for norm in steps:
            torch.manual_seed(seed)
            model = ProbeModel(settings.shape.encoder(task.length, norm=norm), task.vocab_size, task.classes)
            history = train(model, task, settings.train, seed, device)
            steps[norm].append(steps_to(history, settings.threshold))
            curves[norm].append(history.evals)
    reached = [(ln, no) for ln, no in zip(steps["layernorm"], steps["none"], strict=True) if ln is not None]
    # A run without LayerNorm that never reaches the threshold converges in more than the budget: its
    # ratio is a lower bound, budget / steps_with_layernorm.
    ratios = [(no if no is not None else budget) / ln for ln, no in reached]
    bound = any(no is None for _, no in reached)
    if not ratios:
        reason = f"LayerNorm runs never reached {settings.threshold:.0%} in {budget} steps: raise the budget"
        return ClaimResult(
            "layernorm",
            CLAIM,
            ARTICLE,
            "no convergence",
            "not supported",
            reason,
            details={"steps": steps, "accuracy_curves": curves},
        )
    ratio = Spread.of(ratios)
    verdict = judge(ratio.mean, 3.0, 3.0, null=1.0, spread=ratio.half_range)
    if bound and verdict.verdict != "supported" and ratio.mean < 3.0:
        verdict = Judgement(
            "partly", f"runs without LayerNorm did not converge in {budget} steps: a lower bound"
        )
    measured = (
        f"{'≥ ' if bound else ''}{ratio.format(2, '×')} slower (steps to {settings.threshold:.0%}: "
        f"LayerNorm {_show(steps['layernorm'])}, none {_show(steps['none'])}; budget {budget})"
    )
    return ClaimResult(
        "layernorm",
        CLAIM,
        ARTICLE,
        measured,
        verdict.verdict,
        verdict.reason,
        details={"steps": steps, "accuracy_curves": curves},
    )


def _show(values: Sequence[int | None]) -> str:
    return "/".join("never" if v is None else str(v) for v in values)
