"""Throughput and peak memory of every mixer family against sequence length, in one interleaved run.

One layer of each backbone (depth 1) at dim 128, batch 1, fp32, forward + backward over 256 to 16,384
tokens: the Encoder with full attention (torch SDPA) and with sliding-window attention, Mamba (the
bidirectional selective scan, by its default path and by the parallel scan), GAU in its quadratic and its
chunked linear (FLASH) form, and the continuous-depth block (midpoint, 2 steps: 4 evaluations of an
attention block). Families are interleaved at each length; time is the median of the rounds; peak memory
is the profiler's high-water mark. The scaling exponent is the log-log slope of time against tokens from
the shortest to the longest length: 1 is linear, 2 quadratic.

    python -m benchmarks.bench_mixers --out results/mixers/scaling.json     # CPU, minutes
    python -m benchmarks.bench_mixers --smoke                               # seconds, checks the script
    python -m benchmarks.bench_mixers --device cuda --precision bf16 --out results/gpu/mixers.json

On a GPU (step 5 of scripts/gpu_evidence.sh) the clocks are synchronised and peak memory is CUDA's
allocator high-water mark; with bf16 every family runs under autocast (Mamba's scan itself stays fp32, as
mamba_ssm's kernels do). Mamba's `scan: auto` takes the parallel scan there, or mamba_ssm's fused kernel
where it is installed.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from benchmarks.bench_attention import peak_bytes
from benchmarks.bench_common import command_line, write_json
from benchmarks.evidence.timing import interleaved
from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.backbone.config import AttentionConfig


def families(dim: int, n: int) -> dict[str, Callable[[], nn.Module]]:
    """Each family at depth 1 and width `dim`, sized for n tokens."""
    from tabrasa.backbone.gau import GAUConfig, GAUEncoder
    from tabrasa.backbone.mamba import Mamba
    from tabrasa.backbone.mamba_config import MambaConfig
    from tabrasa.backbone.ode_depth import ODEConfig, ODEEncoder

    def encoder(kind: str) -> nn.Module:
        attention = AttentionConfig(kind=kind, window=128)
        return Encoder(EncoderConfig(dim=dim, depth=1, heads=4, max_len=n, dropout=0.0, attention=attention))

    return {
        "full": lambda: encoder("full"),
        "local": lambda: encoder("local"),
        # `scan: auto`, what a user gets: the chunked loop on the CPU, the parallel scan (or mamba_ssm's
        # kernel) on a GPU; the parallel scan beside it on the CPU, since it is the GPU's algorithm
        "mamba": lambda: Mamba(MambaConfig(dim=dim, depth=1, dropout=0.0)),
        "mamba_parallel": lambda: Mamba(MambaConfig(dim=dim, depth=1, dropout=0.0, scan="parallel")),
        "gau": lambda: GAUEncoder(GAUConfig(dim=dim, depth=1, max_len=n, dropout=0.0, form="quadratic")),
        "flash": lambda: GAUEncoder(GAUConfig(dim=dim, depth=1, max_len=n, dropout=0.0, form="chunked")),
        "ode": lambda: ODEEncoder(ODEConfig(dim=dim, heads=4, max_len=n, method="midpoint", steps=2)),
    }


def step_of(model: nn.Module, n: int, dim: int, device: torch.device, bf16: bool) -> Callable[[], None]:
    x = torch.randn(1, n, dim, device=device, requires_grad=True)

    def step() -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            out = model(x)
        out.float().sum().backward()
        model.zero_grad(set_to_none=True)
        x.grad = None

    return step


def device_peak_bytes(step: Callable[[], None], device: torch.device) -> int:
    """The step's peak tensor memory: CUDA's allocator high-water mark above what was already allocated,
    or on the CPU the profiler's allocation records (benchmarks.bench_attention.peak_bytes)."""
    if device.type != "cuda":
        return peak_bytes(step)
    torch.cuda.synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    step()
    torch.cuda.synchronize(device)
    return torch.cuda.max_memory_allocated(device) - before


def scaling(
    lengths: list[int],
    dim: int,
    repeats: int,
    names: list[str],
    device: torch.device,
    bf16: bool,
) -> list[dict[str, Any]]:
    rows = []
    for n in lengths:
        models = {name: build().to(device) for name, build in families(dim, n).items() if name in names}
        steps = {name: step_of(model, n, dim, device, bf16) for name, model in models.items()}
        times = interleaved(steps, device, repeats, 1)
        for name in steps:
            seconds = times[name].median
            peak = device_peak_bytes(steps[name], device) / 2**20
            rows.append(
                {
                    "family": name,
                    "tokens": n,
                    "ms": 1e3 * seconds,
                    "tokens_per_s": n / seconds,
                    "peak_mib": peak,
                }
            )
            print(
                f"  {name:6s} n={n:6d} {rows[-1]['ms']:9.1f} ms {rows[-1]['peak_mib']:9.1f} MiB", flush=True
            )
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per family: the time and memory exponents, and time and memory over full attention's at the longest."""
    out: dict[str, Any] = {}
    by = {(r["family"], r["tokens"]): r for r in rows}
    lengths = sorted({r["tokens"] for r in rows})
    lo, hi = lengths[0], lengths[-1]
    for family in sorted({r["family"] for r in rows}):
        a, b = by[(family, lo)], by[(family, hi)]
        span = math.log(hi / lo)
        # Between the two longest lengths every family's tensors are past the caches, so this exponent
        # reads the algorithm rather than the memory hierarchy (a 4× longer scan leaves L3 for DRAM).
        near = by[(family, lengths[-2])] if len(lengths) > 2 else a
        out[family] = {
            "time_exponent": round(math.log(b["ms"] / a["ms"]) / span, 2),
            "time_exponent_longest": round(math.log(b["ms"] / near["ms"]) / math.log(hi / near["tokens"]), 2),
            "memory_exponent": round(math.log(max(b["peak_mib"], 1e-6) / max(a["peak_mib"], 1e-6)) / span, 2),
        }
        full = by.get(("full", hi))
        if full is not None:
            out[family]["time_over_full"] = round(b["ms"] / full["ms"], 2)
            out[family]["memory_over_full"] = round(b["peak_mib"] / full["peak_mib"], 2)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lengths", type=int, nargs="+", default=[256, 1024, 4096, 16384])
    names = list(families(8, 8))  # the builders only: nothing is constructed
    p.add_argument("--families", nargs="+", choices=names, default=names)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu", help="cpu, or cuda for the GPU variant")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--smoke", action="store_true", help="two short lengths, one round")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(f"bench_mixers: --device {args.device}, but torch sees no CUDA device; use cpu")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.smoke:
        args.lengths, args.repeats, args.dim = [64, 256], 1, 32
    rows = scaling(args.lengths, args.dim, args.repeats, args.families, device, args.precision == "bf16")
    settings = {k: v for k, v in vars(args).items() if k != "out"}
    result = {"settings": settings, "rows": rows, "summary": summarise(rows), "torch": torch.__version__}
    if device.type == "cuda":
        result["gpu"] = torch.cuda.get_device_name(device)
    result["command"] = command_line("benchmarks.bench_mixers", argv)
    print(json.dumps(result["summary"], indent=2))
    if args.out is not None:
        write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
