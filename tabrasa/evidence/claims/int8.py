"""Claim: int8 dynamic quantisation makes inference 3-5× faster. Every nn.Linear gets int8 weights and
activations quantised on the fly (tabrasa.backbone.speed.quantize_int8, torch's quantize_dynamic);
attention itself stays float.

Timed on the CPU at a fixed thread count (dynamic quantisation has CPU kernels only), for the recall model
trained here (whose accuracy and logits are compared before and after) and for a wider encoder, where the
Linear layers' matrix products are a larger share of the time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from tabrasa.backbone.speed import quantize_int8
from tabrasa.evidence.models import Shape
from tabrasa.evidence.probe import Batch, ProbeModel
from tabrasa.evidence.report import ClaimResult, combine, judge
from tabrasa.evidence.synthetic_tasks import FirstTokensTask, RecallTask
from tabrasa.evidence.synthetic_training import TrainConfig, accuracy, train
from tabrasa.evidence.timing import ratio_spread, time_calls

CLAIM = "int8 dynamic quantisation at inference"
ARTICLE = "3–5× faster"
CPU = torch.device("cpu")


@dataclass(frozen=True, kw_only=True)
class Settings:
    task: RecallTask = field(default_factory=RecallTask)
    trained: Shape = field(default_factory=lambda: Shape(dim=64, depth=2, heads=4))
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=400, batch=64, lr=2e-3))
    wide: Shape = field(default_factory=lambda: Shape(dim=256, depth=4, heads=4))
    wide_length: int = 256
    batch: int = 8
    threads: int = 2
    repeats: int = 10

    def __post_init__(self) -> None:
        for name in ("wide_length", "batch", "threads", "repeats"):
            if getattr(self, name) < 1:
                raise ValueError(f"int8 Settings.{name}={getattr(self, name)} must be >= 1")


def _speedup(model: nn.Module, batch: Batch, repeats: int) -> tuple[float, float, dict[str, float]]:
    """fp32 / int8 seconds per forward pass, its timing spread, and both medians."""
    model.eval()
    quantized = quantize_int8(model)
    with torch.inference_mode():
        fp32 = time_calls(lambda: model(batch), CPU, repeats)
        int8 = time_calls(lambda: quantized(batch), CPU, repeats)
    speedup, spread = ratio_spread(fp32, int8)
    return speedup, spread, {"fp32": fp32.median, "int8": int8.median}


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    threads = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    try:
        return _run(settings, seeds)
    finally:
        torch.set_num_threads(threads)


def _run(settings: Settings, seeds: Sequence[int]) -> ClaimResult:
    task = settings.task
    torch.manual_seed(seeds[0])
    model = ProbeModel(settings.trained.encoder(task.length), task.vocab_size, task.classes)
    train(model, task, settings.train, seeds[0], CPU)
    held_out = [
        task.sample(settings.train.batch, torch.Generator().manual_seed(10_000 + i)) for i in range(8)
    ]
    quantized = quantize_int8(model.eval())
    with torch.inference_mode():
        logits = torch.cat([model(b) for b in held_out])
        drift = (torch.cat([quantized(b) for b in held_out]) - logits).abs().max().item()
    acc_fp32, acc_int8 = accuracy(model, held_out, CPU), accuracy(quantized, held_out, CPU)

    timed = Batch(
        torch.cat([b.ids for b in held_out])[: settings.batch],
        torch.cat([b.label for b in held_out])[: settings.batch],
    )
    wide_task = FirstTokensTask(length=settings.wide_length, signal=1)
    wide = ProbeModel(settings.wide.encoder(wide_task.length), wide_task.vocab_size, wide_task.classes)
    wide_batch = wide_task.sample(settings.batch, torch.Generator().manual_seed(0))
    timings = {
        f"dim {settings.trained.dim}, N={task.length}": _speedup(model, timed, settings.repeats),
        f"dim {settings.wide.dim}, N={wide_task.length}": _speedup(wide, wide_batch, settings.repeats),
    }
    judgements = [judge(s, 3.0, 5.0, null=1.0, spread=spread) for s, spread, _ in timings.values()]
    verdict = combine(judgements, list(timings))
    measured = ", ".join(f"{s:.2f}× at {label}" for label, (s, _, _) in timings.items())
    measured += (
        f" ({settings.threads} threads); accuracy {100 * acc_fp32:.1f}% → {100 * acc_int8:.1f}%, "
        f"max logit change {drift:.3f}"
    )
    details = {
        "timings": {
            label: {"speedup": s, "spread": sp, "seconds": t} for label, (s, sp, t) in timings.items()
        },
        "accuracy": {"fp32": acc_fp32, "int8": acc_int8},
        "max_abs_logit_change": drift,
    }
    return ClaimResult("int8", CLAIM, ARTICLE, measured, verdict.verdict, verdict.reason, details=details)
