"""Pieces shared by the benchmark scripts: thread setup, the matmul peak, model FLOPs, a profiler
breakdown, and table/JSON output. Timing itself is `benchmarks.evidence.timing` (interleaved, medians), and
the accuracy probes train `benchmarks.evidence.probe.ProbeModel` with `synthetic_training`."""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.evidence.timing import time_calls


def command_line(module: str, argv: Sequence[str] | None) -> str:
    """The command that recreates a result: the script's module with every argument as given (argv None:
    the process's own), so a result file records its shapes and settings, not only where it was written."""
    given = sys.argv[1:] if argv is None else list(argv)
    return shlex.join(["python", "-m", module, *given])


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


def matmul_peak(
    dtype: torch.dtype, n: int = 4096, repeats: int = 5, device: torch.device | None = None
) -> float:
    """FLOP/s of one large square GEMM: the most this device's matmul kernels reach at this dtype (a
    measured peak, not the data sheet's: MFU against it says how close a model comes to the hardware)."""
    device = device or torch.device("cpu")
    a, b = (torch.randn(n, n, device=device).to(dtype) for _ in range(2))
    return 2 * n**3 / time_calls(lambda: a @ b, device, repeats, warmup=1).median


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


def timing_parser(doc: str | None, repeats: int) -> argparse.ArgumentParser:
    """The options every CPU timing script shares: rounds, torch threads, a smoke mode and the output."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=repeats)
    p.add_argument("--threads", type=int, default=1, help="1: as each lane of the curves trains")
    p.add_argument("--smoke", action="store_true", help="one tiny shape, one round")
    p.add_argument("--out", type=Path, default=None)
    return p


def finished(module: str, argv: Sequence[str] | None, out: Path | None, **payload: Any) -> dict[str, Any]:
    """The result a script returns, its recreating command first; written to `out` as JSON when given."""
    result = {"command": command_line(module, argv), **payload}
    if out is not None:
        write_json(out, result)
    return result


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
