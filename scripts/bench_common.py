"""Pieces shared by the benchmark scripts: thread setup, interleaved timing, the matmul peak, a small
classifier trainer for the accuracy probes, and table/JSON output.

Timing discipline: the systems under comparison run in one process, interleaved round by round (the order
rotates each round), after warm-up, and each is summarised by its median. Other work on a shared machine
then slows every system alike instead of whichever happened to run at the time.
"""

from __future__ import annotations

import contextlib
import json
import math
import platform
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone import Encoder, EncoderConfig, TokenGrid
from tabrasa.backbone.speed import Precision, autocast


def setup(threads: int, seed: int = 0) -> dict[str, Any]:
    """Fix threads and seed; flush denormals to zero, as every system here runs in this process (tiny
    gradients in AdamW's second moment otherwise hit x86's slow denormal path, at random)."""
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    torch.set_flush_denormal(True)
    return {
        "threads": threads,
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "bf16_matmul": bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()),
    }


def interleaved(cells: dict[str, Callable[[], None]], repeats: int, warmup: int) -> dict[str, list[float]]:
    """Seconds per call of each cell, the cells alternating round by round in a rotating order."""
    names = list(cells)
    for _ in range(warmup):
        for name in names:
            cells[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            cells[name]()
            times[name].append(time.perf_counter() - start)
    return times


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def matmul_peak(dtype: torch.dtype, n: int = 4096, repeats: int = 5) -> float:
    """FLOP/s of one large square GEMM: the most this machine's matmul kernels reach at this dtype."""
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    a @ b
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * n**3 / median(times)


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"
        return "" if value is None else str(value)

    text = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(t[i]) for t in text)) for i, c in enumerate(columns)]
    print(" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for t in text:
        print(" | ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)))


@contextlib.contextmanager
def merged_json(path: str) -> Iterator[dict[str, Any]]:
    """Each part run updates its own keys, so scaling and accuracy can run separately into one file."""
    result = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    yield result
    write_json(path, result)


def write_json(path: str | Path, payload: dict[str, Any]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")


class SequenceClassifier(nn.Module):
    """Token ids → embedding → tabrasa Encoder → CLS token (position 0) → linear head."""

    def __init__(self, vocab: int, classes: int, config: EncoderConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, config.dim, padding_idx=0)
        self.encoder = Encoder(config)
        self.head = nn.Linear(config.dim, classes)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, grid: TokenGrid | None = None) -> torch.Tensor:
        return self.head(self.encoder(self.embed(ids), mask, grid=grid)[:, 0])


@dataclass
class Batch:
    ids: torch.Tensor  # (B, N) long, 0 = padding
    labels: torch.Tensor  # (B,)
    grid: TokenGrid | None = None


def as_grid(batch: Batch, width: int) -> Batch:
    """Lay a CLS-led sequence out as rows of `width` tokens after the CLS (the strided layout of Child et
    al. 2019), padding the last row, so axial attention can run over a plain sequence."""
    n = batch.ids.shape[1] - 1
    rows = math.ceil(n / width)
    ids = F.pad(batch.ids, (0, 1 + rows * width - batch.ids.shape[1]))
    return Batch(ids, batch.labels, TokenGrid(rows, width, prefix=1))


def train_and_test(
    model: SequenceClassifier,
    train: Sequence[Batch],
    test: Sequence[Batch],
    epochs: int,
    lr: float,
    precision: Precision = "fp32",
    seed: int = 0,
) -> dict[str, float]:
    """AdamW with linear warm-up and cosine decay; returns test accuracy and training seconds."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    total = epochs * len(train)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, lr, total_steps=total, pct_start=0.1)
    start = time.perf_counter()
    model.train()
    for _ in range(epochs):
        for i in torch.randperm(len(train), generator=generator).tolist():
            batch = train[i]
            with autocast(precision):
                logits = model(batch.ids, batch.ids != 0, batch.grid)
            F.cross_entropy(logits.float(), batch.labels).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            schedule.step()
    seconds = time.perf_counter() - start
    model.eval()
    correct = count = 0
    with torch.inference_mode():
        for batch in test:
            with autocast(precision):
                logits = model(batch.ids, batch.ids != 0, batch.grid)
            correct += int((logits.argmax(-1) == batch.labels).sum())
            count += len(batch.labels)
    return {"accuracy": correct / count, "train_seconds": seconds}


def model_flops_per_token(dim: int, depth: int, tokens: int, mlp_ratio: float = 4.0) -> float:
    """Forward FLOPs per token of a transformer encoder: 2 per weight of the QKV, output and MLP matmuls,
    plus QKᵀ and attention·V (2·N·D each). Training is 3× (backward = 2× forward), Kaplan et al. 2020."""
    weights = dim * 3 * dim + dim * dim + 2 * dim * int(dim * mlp_ratio)
    return depth * (2 * weights + 4 * tokens * dim)


_OP_CATEGORIES = {
    "matmul": (
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::baddbmm",
        "aten::_int_mm",
        "quantized::linear_dynamic",
    ),
    "attention": (
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
    ),
    "gelu": ("aten::gelu", "aten::gelu_backward"),
    "layer_norm": ("aten::native_layer_norm", "aten::native_layer_norm_backward"),
    "copy_cast": (
        "aten::copy_",
        "aten::to",
        "aten::_to_copy",
        "aten::clone",
        "aten::contiguous",
        "aten::cat",
    ),
}


def op_breakdown(step: Callable[[], None], steps: int = 2) -> dict[str, float]:
    """Milliseconds per step by kind of work (self time of each op, from torch.profiler), the optimizer
    step counted whole. Answers where the time goes when two systems differ."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    owner = {op: category for category, ops in _OP_CATEGORIES.items() for op in ops}
    totals = dict.fromkeys([*_OP_CATEGORIES, "optimizer", "other"], 0.0)
    inside_optimizer: set[int] = set()
    events = prof.events()
    for event in events:
        if event.name.startswith("Optimizer.step"):
            totals["optimizer"] += event.cpu_time_total
            inside_optimizer.update(id(e) for e in _descendants(event))
    for event in events:
        if id(event) not in inside_optimizer and not event.name.startswith("Optimizer.step"):
            totals[owner.get(event.name, "other")] += event.self_cpu_time_total
    out = {k: v / 1e3 / steps for k, v in totals.items()}
    out["total"] = sum(out.values())
    return out


def _descendants(event: Any) -> list[Any]:
    found = []
    for child in event.cpu_children:
        found.append(child)
        found.extend(_descendants(child))
    return found
