"""Claim: int8 dynamic quantisation makes inference 3-5× faster. Every nn.Linear gets int8 weights and
activations quantised on the fly (benchmarks.speed.quantize_int8, torch's quantize_dynamic);
attention itself stays float.

Timed on the CPU at a fixed thread count (dynamic quantisation has CPU kernels only), for the recall model
trained here (whose accuracy and logits are compared before and after) and for a wider encoder, where the
Linear layers' matrix products are a larger share of the time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from benchmarks.evidence.claims.arm_sweep import RATES, choose_rate, final_validation
from benchmarks.evidence.claims.paired_timing import MIN_ROUNDS, MedianInterval, ratio_interval
from benchmarks.evidence.intervals import Proportion, wilson_interval
from benchmarks.evidence.models import Shape, count_parameters
from benchmarks.evidence.probe import Batch, ProbeModel
from benchmarks.evidence.report import ClaimResult, combine, judge
from benchmarks.evidence.synthetic_tasks import FirstTokensTask, RecallTask
from benchmarks.evidence.synthetic_training import HeldOut, History, TrainConfig, outcomes, train
from benchmarks.evidence.timing import interleaved
from benchmarks.speed import quantize_int8

CLAIM = "int8 dynamic quantisation at inference"
ARTICLE = "3–5× faster"
CPU = torch.device("cpu")


@dataclass(frozen=True, kw_only=True)
class Settings:
    """train: the trained model's budget (its lr is replaced by the rate chosen on validation). repeats:
    timed rounds, each one forward pass of fp32 and of int8 in alternating order."""

    task: RecallTask = field(default_factory=RecallTask)
    trained: Shape = field(default_factory=lambda: Shape(dim=64, depth=2, heads=4))
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=400, batch=64))
    rates: tuple[float, ...] = RATES
    wide: Shape = field(default_factory=lambda: Shape(dim=256, depth=4, heads=4))
    wide_length: int = 256
    batch: int = 8
    threads: int = 2
    repeats: int = 20

    def __post_init__(self) -> None:
        for name in ("wide_length", "batch", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"int8 Settings.{name}={getattr(self, name)} must be >= 1")
        if self.repeats < MIN_ROUNDS:
            raise ValueError(
                f"int8 Settings.repeats={self.repeats} must be >= {MIN_ROUNDS} (a 95% interval of the median)"
            )


def _speedup(model: nn.Module, batch: Batch, settings: Settings) -> tuple[MedianInterval, dict[str, float]]:
    """fp32 / int8 seconds per forward pass at `settings.threads`, from interleaved rounds, and both
    medians. Only the timing takes the claim's thread count: training runs at the caller's, which on a
    shared machine may be fewer (oversubscribed threads slow tiny training steps many times over)."""
    model.eval()
    quantized = quantize_int8(model)
    calls = {"fp32": lambda: model(batch), "int8": lambda: quantized(batch)}
    threads = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    try:
        with torch.inference_mode():
            times = interleaved(calls, CPU, settings.repeats)
    finally:
        torch.set_num_threads(threads)
    return ratio_interval(times["fp32"], times["int8"]), {name: t.median for name, t in times.items()}


def _trained(settings: Settings, seed: int, held_out: HeldOut) -> tuple[ProbeModel, dict[str, object]]:
    """The recall model at the rate its validation accuracy chose (one seed: speed is the claim, the
    accuracy only checks that quantisation keeps a trained model's answers)."""
    task, models = settings.task, {}

    def train_at(lr: float) -> History:
        torch.manual_seed(seed)
        models[lr] = ProbeModel(settings.trained.encoder(task.length), task.vocab_size, task.classes)
        config = replace(settings.train, lr=lr)
        return train(models[lr], task, config, seed, CPU, held_out.validation, held_out.test)

    choice = choose_rate(train_at, settings.rates, final_validation)
    return models[choice.lr], {
        "lr": choice.lr,
        "validation_by_lr": {f"{lr:g}": v for lr, v in choice.scores.items()},
    }


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    """On the CPU whatever `device` says: dynamic quantisation has CPU kernels only."""
    task = settings.task
    held_out = HeldOut.of(task, settings.train)
    model, sweep = _trained(settings, seeds[0], held_out)
    quantized = quantize_int8(model.eval())
    with torch.inference_mode():
        logits = torch.cat([model(b) for b in held_out.test])
        drift = (torch.cat([quantized(b) for b in held_out.test]) - logits).abs().max().item()
    right = {"fp32": outcomes(model, held_out.test, CPU), "int8": outcomes(quantized, held_out.test, CPU)}
    acc = {name: wilson_interval(int(r.sum()), r.numel()) for name, r in right.items()}

    timed = Batch(
        torch.cat([b.ids for b in held_out.test])[: settings.batch],
        torch.cat([b.label for b in held_out.test])[: settings.batch],
    )
    wide_task = FirstTokensTask(length=settings.wide_length, signal=1)
    wide = ProbeModel(settings.wide.encoder(wide_task.length), wide_task.vocab_size, wide_task.classes)
    wide_batch = wide_task.sample(settings.batch, torch.Generator().manual_seed(0))
    timings = {
        f"dim {settings.trained.dim}, N={task.length}": _speedup(model, timed, settings),
        f"dim {settings.wide.dim}, N={wide_task.length}": _speedup(wide, wide_batch, settings),
    }
    judgements = [judge(speedup, 3.0, 5.0, null=1.0) for speedup, _ in timings.values()]
    verdict = combine(judgements, list(timings))
    measured = ", ".join(f"{speedup.format()} at {label}" for label, (speedup, _) in timings.items())
    measured += (
        f" (median of {settings.repeats} interleaved rounds, 95% interval of the median; "
        f"{settings.threads} threads; {count_parameters(model):,} and {count_parameters(wide):,} params in "
        f"total); test accuracy {_percent(acc['fp32'])} → {_percent(acc['int8'])} of "
        f"{acc['fp32'].n:,} test examples (95% Wilson intervals; lr {sweep['lr']:g}), max logit change "
        f"{drift:.3f}"
    )
    details = {
        "timings": {
            label: {"speedup": s.median, "interval": [s.low, s.high], "seconds": t}
            for label, (s, t) in timings.items()
        },
        "trained": sweep,
        "accuracy": {name: [a.mean, a.low, a.high] for name, a in acc.items()},
        "test_examples": acc["fp32"].n,
        "max_abs_logit_change": drift,
        "parameters_total": {"trained": count_parameters(model), "wide": count_parameters(wide)},
    }
    return ClaimResult.of("int8", CLAIM, ARTICLE, measured, verdict, details)


def _percent(proportion: Proportion) -> str:
    return f"{100 * proportion.mean:.1f}% [{100 * proportion.low:.1f}, {100 * proportion.high:.1f}]"
