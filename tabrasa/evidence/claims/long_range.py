"""Claim: at sequence length 1,024 a transformer beats an LSTM by 27% accuracy on a task that needs the
first tokens at the end. Both read the answer at the last token; the LSTM has the transformer's size."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from tabrasa.evidence.models import Shape, block_parameters, count_parameters, matched_lstm
from tabrasa.evidence.probe import ProbeModel
from tabrasa.evidence.report import ClaimResult, Spread, judge
from tabrasa.evidence.synthetic_tasks import FirstTokensTask
from tabrasa.evidence.synthetic_training import TrainConfig, train

CLAIM = "long-range dependency at N=1,024: transformer vs LSTM of equal size"
ARTICLE = "+27% accuracy (read as points)"


@dataclass(frozen=True, kw_only=True)
class Settings:
    task: FirstTokensTask = field(default_factory=lambda: FirstTokensTask(length=1024, signal=32))
    shape: Shape = field(default_factory=lambda: Shape(dim=32, depth=2, heads=2))
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=150, batch=16, lr=3e-3))


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task = settings.task
    accuracies: dict[str, list[float]] = {"transformer": [], "lstm": []}
    for seed in seeds:
        torch.manual_seed(seed)
        encoder = settings.shape.encoder(task.length)
        backbones = {"transformer": encoder, "lstm": matched_lstm(encoder)}
        sizes = {"transformer_blocks": block_parameters(encoder), "lstm": count_parameters(backbones["lstm"])}
        for name, backbone in backbones.items():
            model = ProbeModel(backbone, task.vocab_size, task.classes)
            accuracies[name].append(train(model, task, settings.train, seed, device).final_accuracy)
    transformer, lstm = Spread.of(accuracies["transformer"]), Spread.of(accuracies["lstm"])
    gap = Spread.of(
        [100 * (t - r) for t, r in zip(accuracies["transformer"], accuracies["lstm"], strict=True)]
    )
    verdict = judge(gap.mean, 27.0, 27.0, null=0.0, spread=gap.half_range)
    measured = (
        f"{gap.mean:+.1f} ± {gap.half_range:.1f} points (transformer {100 * transformer.mean:.1f}%, "
        f"LSTM {100 * lstm.mean:.1f}%; chance {100 / task.classes:.0f}%; "
        f"{sizes['transformer_blocks']:,} vs {sizes['lstm']:,} params)"
    )
    return ClaimResult(
        "long_range",
        CLAIM,
        ARTICLE,
        measured,
        verdict.verdict,
        verdict.reason,
        details={
            "accuracy": accuracies,
            "gap_points": gap.values,
            "parameters": sizes,
            "lstm_layers": backbones["lstm"].lstm.num_layers,
            "relative_gain": (transformer.mean - lstm.mean) / max(lstm.mean, 1e-9),
        },
    )
