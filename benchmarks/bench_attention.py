"""Time and peak memory of each attention kind against sequence length, and each kind's accuracy on ListOps.

Scaling: one attention layer (fused QKV, the kind's mixer, output projection) at dim 384 / 6 heads, batch 1,
forward + backward, for 256 to 16,384 tokens. Kinds are interleaved at each length; time is the median of
the rounds; peak memory is the high-water mark of tensor memory during one step (torch.profiler's allocation
records), above the inputs and weights. `full` is torch's SDPA, which on CPU picks a flash kernel whose memory
is linear in N; `full-math` forces SDPA's math kernel, the materialised N×N softmax that sparse attention is
usually compared with (measured up to --math-max tokens, beyond which its memory is extrapolated as N²).

Accuracy: one small classifier per kind trained on the same generated ListOps data (Tay et al. 2020), to test
two claims: sliding-window attention keeps >= 85% of full attention's accuracy with 60-90% less attention
compute, and a rank-64 Linformer costs little accuracy.

    python -m benchmarks.bench_attention --part scaling     # ~4 minutes on 2 cores
    python -m benchmarks.bench_attention --part accuracy    # ~6 minutes on 2 cores
    python -m benchmarks.bench_attention --smoke            # seconds, checks the script itself
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

from benchmarks.bench_common import merged_json, print_table, setup
from benchmarks.bench_tasks import listops_accuracy
from benchmarks.evidence.timing import interleaved
from tabrasa.backbone import AttentionConfig, AttentionMask, EncoderConfig, TokenGrid
from tabrasa.backbone.attention import MultiHeadAttention
from tabrasa.backbone.mixers import make_mixer
from tabrasa.plotting import pyplot, save


def near_square_grid(n: int) -> TokenGrid:
    """The most square height × width = n, as image and spectrogram patch grids are."""
    height = max(h for h in range(1, math.isqrt(n) + 1) if n % h == 0)
    return TokenGrid(height, n // height)


def attention_config(kind: str, args: argparse.Namespace) -> AttentionConfig:
    if kind in ("full", "full-math", "axial"):
        return AttentionConfig(kind="axial" if kind == "axial" else "full")
    if kind == "local":
        return AttentionConfig(kind="local", window=args.window, global_tokens=args.global_tokens)
    if kind == "lowrank":
        return AttentionConfig(kind="lowrank", rank=args.rank)
    raise SystemExit(f"unknown kind {kind!r}; choose from full, full-math, local, lowrank, axial")


def layer_step(kind: str, n: int, args: argparse.Namespace) -> Callable[[], None]:
    """One forward + backward of an attention layer of this kind over n tokens."""
    # max_len = n: the low-rank projections span exactly the n tokens timed
    config = EncoderConfig(dim=args.dim, heads=args.heads, max_len=n, attention=attention_config(kind, args))
    layer = MultiHeadAttention(args.dim, args.heads, make_mixer(config))
    x = torch.randn(args.batch, n, args.dim, requires_grad=True)
    mask = AttentionMask.build(None, False, near_square_grid(n) if kind == "axial" else None)
    math_only = kind == "full-math"

    def step() -> None:
        with sdpa_kernel(SDPBackend.MATH) if math_only else contextlib.nullcontext():
            layer(x, mask).sum().backward()
        layer.zero_grad(set_to_none=True)
        x.grad = None

    return step


def peak_bytes(step: Callable[[], None]) -> int:
    """High-water mark of tensor memory allocated during `step`, from the profiler's allocation records."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted((e for e in prof.events() if e.self_cpu_memory_usage), key=lambda e: e.time_range.start)
    current = peak = 0
    for event in events:
        current += event.self_cpu_memory_usage
        peak = max(peak, current)
    return peak


def scaling(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for n in args.lengths:
        kinds = [k for k in args.kinds if not (k == "full-math" and n > args.math_max)]
        steps = {kind: layer_step(kind, n, args) for kind in kinds}
        repeats = args.repeats if n <= 4096 else max(1, args.repeats - 1)
        times = interleaved(steps, torch.device("cpu"), repeats, args.warmup)
        for kind in kinds:
            rows.append(
                {
                    "kind": kind,
                    "tokens": n,
                    "ms": 1e3 * times[kind].median,
                    "peak_mib": peak_bytes(steps[kind]) / 2**20,
                    "rounds_ms": [round(1e3 * t, 1) for t in times[kind].seconds],
                }
            )
            print(
                f"  {kind:9s} n={n:6d} {rows[-1]['ms']:9.1f} ms {rows[-1]['peak_mib']:9.1f} MiB", flush=True
            )
        del steps
    return rows


def summarise(rows: list[dict[str, Any]], longest: int, base: int) -> dict[str, Any]:
    """The targets: local's memory at the longest length against full's, and local's time growth."""
    cell = {(r["kind"], r["tokens"]): r for r in rows}
    out: dict[str, Any] = {}
    local = cell.get(("local", longest))
    if local is not None:
        for kind in ("full", "full-math"):
            if (kind, longest) in cell:
                out[f"local_over_{kind}_memory"] = local["peak_mib"] / cell[(kind, longest)]["peak_mib"]
        math_rows = [r for r in rows if r["kind"] == "full-math"]
        if math_rows and ("full-math", longest) not in cell:
            top = max(math_rows, key=lambda r: r["tokens"])
            estimate = top["peak_mib"] * (longest / top["tokens"]) ** 2
            out["full_math_memory_extrapolated_mib"] = estimate
            out["local_over_full_math_memory_extrapolated"] = local["peak_mib"] / estimate
    for kind in ("local", "lowrank", "axial", "full"):
        if (kind, base) in cell and (kind, longest) in cell:
            ratio = cell[(kind, longest)]["ms"] / cell[(kind, base)]["ms"]
            out[f"{kind}_time_growth_{base}_to_{longest}_over_linear"] = ratio / (longest / base)
    return out


def plot(rows: list[dict[str, Any]], path: str) -> None:
    fig, axes = pyplot().subplots(1, 2, figsize=(11, 4.2))
    for kind in dict.fromkeys(r["kind"] for r in rows):
        kr = [r for r in rows if r["kind"] == kind]
        n = [r["tokens"] for r in kr]
        axes[0].plot(n, [r["ms"] for r in kr], marker="o", label=kind)
        axes[1].plot(n, [r["peak_mib"] for r in kr], marker="o", label=kind)
    for ax, label in zip(axes, ("forward + backward time (ms)", "peak tensor memory (MiB)"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length (tokens)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend()
    fig.suptitle("One attention layer (dim 384, 6 heads, batch 1), CPU")
    save(fig, Path(path))


def accuracy(args: argparse.Namespace) -> dict[str, Any]:
    kinds = {
        "full": AttentionConfig(kind="full"),
        f"local w={args.listops_window}": AttentionConfig(
            kind="local", window=args.listops_window, global_tokens=1
        ),
        f"lowrank r={args.rank}": AttentionConfig(kind="lowrank", rank=args.rank),
        "axial": AttentionConfig(kind="axial"),
    }
    return listops_accuracy(
        kinds,
        num_train=args.listops_train,
        num_test=args.listops_test,
        min_length=args.listops_min_length,
        max_length=args.listops_max_length,
        dim=args.listops_dim,
        depth=args.listops_depth,
        heads=4,
        num_epochs=args.listops_epochs,
        batch_size=32,
        lr=args.listops_lr,
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=("all", "scaling", "accuracy"), default="all")
    parser.add_argument("--lengths", default="256,512,1024,2048,4096,8192,16384")
    parser.add_argument("--kinds", default="full,full-math,local,lowrank,axial")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--window", type=int, default=128)
    parser.add_argument("--global-tokens", type=int, default=1)
    parser.add_argument("--rank", type=int, default=64)
    parser.add_argument("--math-max", type=int, default=8192, help="longest input for the N×N math kernel")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--listops-train", type=int, default=5000)
    parser.add_argument("--listops-test", type=int, default=1000)
    parser.add_argument("--listops-min-length", type=int, default=128)
    parser.add_argument("--listops-max-length", type=int, default=256)
    parser.add_argument("--listops-window", type=int, default=16)
    parser.add_argument("--listops-dim", type=int, default=64)
    parser.add_argument("--listops-depth", type=int, default=2)
    parser.add_argument("--listops-epochs", type=int, default=6)
    parser.add_argument("--listops-lr", type=float, default=1e-3)
    parser.add_argument("--out", default="results/bench_attention.json")
    parser.add_argument("--png", default="results/attention_memory.png")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes: checks the script, measures nothing"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.lengths, args.dim, args.heads, args.window, args.rank, args.math_max = "16,64", 32, 2, 8, 8, 64
        args.repeats, args.listops_train, args.listops_test, args.listops_epochs = 1, 32, 16, 1
        args.listops_min_length, args.listops_max_length, args.listops_window, args.listops_dim = 8, 32, 4, 16
    args.lengths = [int(n) for n in args.lengths.split(",")]
    args.kinds = args.kinds.split(",")
    env = setup(args.threads)
    with merged_json(args.out) as result:
        result["environment"] = env
        if args.part in ("all", "scaling"):
            rows = scaling(args)
            print_table(rows, ["kind", "tokens", "ms", "peak_mib"])
            result["scaling"] = {
                "config": {
                    k: getattr(args, k)
                    for k in (
                        "dim",
                        "heads",
                        "batch",
                        "window",
                        "global_tokens",
                        "rank",
                        "math_max",
                        "repeats",
                        "lengths",
                    )
                },
                "rows": rows,
                "summary": summarise(rows, max(args.lengths), min(2048, max(args.lengths) // 2)),
            }
            print(json.dumps(result["scaling"]["summary"], indent=2))
            plot(rows, args.png)
        if args.part in ("all", "accuracy"):
            result["listops"] = accuracy(args)
            print_table(
                result["listops"]["kinds"],
                ["name", "accuracy", "accuracy_vs_full", "attention_flops_vs_full", "train_seconds"],
            )
    print(f"wrote {args.out}" + (f" and {args.png}" if args.part != "accuracy" else ""))
    return result


if __name__ == "__main__":
    main()
