"""Claim: a transformer trains 5-10× faster than an RNN of equal size. Measured as the wall-clock time
of one training step (forward, backward, AdamW update) on the same batch, at several sequence lengths.

Recurrence runs its N steps one after another; attention processes all N tokens in a few large matrix
products (Vaswani et al. 2017, Table 1: O(1) sequential operations vs O(n)), at O(N²) work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.evidence.claims.paired_timing import MIN_ROUNDS, ratio_interval
from benchmarks.evidence.models import Shape, count_parameters, matched_lstm
from benchmarks.evidence.probe import ProbeModel
from benchmarks.evidence.report import ClaimResult, combine, judge
from benchmarks.evidence.synthetic_tasks import FirstTokensTask
from benchmarks.evidence.timing import interleaved

CLAIM = "training speed vs an RNN (LSTM) of equal size"
ARTICLE = "5–10× faster"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """repeats: timed rounds per length, each one step of both arms in alternating order."""

    lengths: tuple[int, ...] = (64, 256, 1024)
    shape: Shape = field(default_factory=lambda: Shape(dim=32, depth=2, heads=2, positions="sinusoidal"))
    batch: int = 16
    repeats: int = 12

    def __post_init__(self) -> None:
        if not self.lengths or min(self.lengths) < 2:
            raise ValueError(
                f"rnn_speed Settings.lengths={self.lengths}: give sequence lengths of at least 2"
            )
        if self.batch < 1 or self.repeats < MIN_ROUNDS:
            raise ValueError(
                f"rnn_speed Settings batch={self.batch}, repeats={self.repeats}: batch must be >= 1 and "
                f"repeats >= {MIN_ROUNDS} (a 95% interval of the median needs them)"
            )


def _step(model: nn.Module, task: FirstTokensTask, batch: int, device: torch.device) -> Callable[[], None]:
    """One training step (forward, backward, AdamW update) of `model` on a fixed batch."""
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = task.sample(batch, torch.Generator().manual_seed(0)).to(device)

    def step() -> None:
        loss = F.cross_entropy(model(data), data.label)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    rows, judgements, labels = {}, [], []
    for length in settings.lengths:
        task = FirstTokensTask(length=length, signal=1)
        torch.manual_seed(seeds[0])
        encoder = settings.shape.encoder(length)
        models = {
            "transformer": ProbeModel(encoder, task.vocab_size, task.classes),
            "lstm": ProbeModel(matched_lstm(encoder), task.vocab_size, task.classes),
        }
        steps = {name: _step(m, task, settings.batch, device) for name, m in models.items()}
        # Interleaved rounds (A B, B A, …): load on the shared machine slows both arms of a round alike.
        times = interleaved(steps, device, settings.repeats)
        speedup = ratio_interval(times["lstm"], times["transformer"])
        judgements.append(judge(speedup, 5.0, 10.0, null=1.0))
        labels.append(f"N={length}")
        rows[length] = {
            "speedup": speedup.median,
            "interval": [speedup.low, speedup.high],
            "seconds_per_step": {name: t.median for name, t in times.items()},
            "seconds_per_round": {name: list(t.seconds) for name, t in times.items()},
            "parameters_total": {name: count_parameters(m) for name, m in models.items()},
            "lstm_layers": models["lstm"].backbone.lstm.num_layers,
        }
    verdict = combine(judgements, labels)
    measured = ", ".join(
        f"{r['speedup']:.2f}× [{r['interval'][0]:.2f}, {r['interval'][1]:.2f}] at N={n}"
        for n, r in rows.items()
    )
    first = settings.lengths[0]
    sizes = rows[first]["parameters_total"]
    # With sinusoidal positions the totals do not grow with N; a learned table would make them differ.
    where = "" if all(r["parameters_total"] == sizes for r in rows.values()) else f" at N={first}"
    measured += (
        f" (median of {settings.repeats} interleaved rounds, 95% interval of the median; "
        f"{sizes['transformer']:,} vs {sizes['lstm']:,} params in total{where}, {device.type})"
    )
    return ClaimResult.of("rnn_speed", CLAIM, ARTICLE, measured, verdict, details=rows)
