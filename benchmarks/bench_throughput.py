"""Training and inference throughput of tabrasa's backbone against timm ViT blocks and Hugging Face BertModel.

All systems are built at identical shapes (dim, depth, heads, MLP 4×dim, sequence, batch) and measured in one
process, interleaved round by round, after warm-up; each cell is the median of the rounds. Training is
forward + backward + AdamW; inference is a forward pass under torch.inference_mode. Precisions: fp32
(eager, the peers' default) and bf16 (autocast, the same switch for every system); int8 dynamic quantization
for CPU inference of tabrasa and timm. Model-FLOPs utilisation is against the matmul peak measured here.

    python -m benchmarks.bench_throughput                       # the full run, ~5 minutes on 2 cores
    python -m benchmarks.bench_throughput --smoke               # a few seconds, checks the script itself
    python -m benchmarks.bench_throughput --device cuda --no-int8 --no-profile --part speed   # one GPU
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from benchmarks.bench_common import (
    matmul_peak,
    merged_json,
    model_flops_per_token,
    op_breakdown,
    print_table,
    setup,
)
from benchmarks.evidence.timing import interleaved
from benchmarks.speed import Precision, autocast, compile_model, quantize_int8
from tabrasa.backbone import Encoder, EncoderConfig


def build_systems(dim: int, depth: int, heads: int, max_len: int, names: list[str]) -> dict[str, nn.Module]:
    """Each library's own encoder at the same shape, its defaults otherwise; inputs are (B, N, dim)."""
    from timm.models.vision_transformer import Block as TimmBlock
    from transformers import BertConfig, BertModel

    def bert(dropout: float) -> nn.Module:
        config = BertConfig(
            hidden_size=dim,
            num_hidden_layers=depth,
            num_attention_heads=heads,
            intermediate_size=4 * dim,
            max_position_embeddings=max_len,
            hidden_dropout_prob=dropout,
            attention_probs_dropout_prob=dropout,
            attn_implementation="sdpa",
        )
        return BertInputs(BertModel(config, add_pooling_layer=False))

    factories: dict[str, Callable[[], nn.Module]] = {
        "tabrasa": lambda: Encoder(EncoderConfig(dim=dim, depth=depth, heads=heads, max_len=max_len)),
        "timm": lambda: nn.Sequential(
            *(TimmBlock(dim, heads, mlp_ratio=4.0, qkv_bias=True) for _ in range(depth)), nn.LayerNorm(dim)
        ),
        "bert": lambda: bert(0.1),  # BertConfig's default dropout, as a user gets it
        "bert-p0": lambda: bert(0.0),  # the same computation as the others: no dropout
    }
    unknown = set(names) - set(factories)
    if unknown:
        raise SystemExit(f"unknown systems {sorted(unknown)}; choose from {sorted(factories)}")
    return {name: factories[name]() for name in names}


class BertInputs(nn.Module):
    """BertModel fed token vectors (inputs_embeds): it still adds its position and type embeddings + LN."""

    def __init__(self, bert: nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bert(inputs_embeds=x).last_hidden_state


def train_cell(model: nn.Module, x: torch.Tensor, precision: Precision) -> Callable[[], None]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> None:
        model.train()
        with autocast(precision, x.device):
            out = model(x)
        out.float().square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def infer_cell(model: nn.Module, x: torch.Tensor, precision: Precision) -> Callable[[], None]:
    def forward() -> None:
        model.eval()
        with torch.inference_mode(), autocast(precision, x.device):
            model(x)

    return forward


def bench_shape(args: argparse.Namespace, seq: int, batch: int) -> list[dict[str, Any]]:
    systems = build_systems(args.dim, args.depth, args.heads, max(seq, 512), args.systems)
    if args.compile:
        systems = {name: compile_model(m, dynamic=False) for name, m in systems.items()}
    device = torch.device(args.device)
    systems = {name: model.to(device) for name, model in systems.items()}
    x = torch.randn(batch, seq, args.dim, device=device)
    cells: dict[tuple[str, str, str], Callable[[], None]] = {}
    for name, model in systems.items():
        for precision in args.precisions:
            if "train" in args.modes:
                cells[(name, "train", precision)] = train_cell(model, x, precision)
            if "infer" in args.modes:
                cells[(name, "infer", precision)] = infer_cell(model, x, precision)
    if args.int8:
        for name in ("tabrasa", "timm"):
            if name in systems:
                quantized = quantize_int8(copy.deepcopy(systems[name]).eval())
                cells[(name, "infer", "int8")] = infer_cell(quantized, x, "fp32")
    keyed = {"/".join(k): fn for k, fn in cells.items()}
    times = interleaved(keyed, device, args.repeats, args.warmup)
    rows = []
    for (name, mode, precision), _ in cells.items():
        timing = times[f"{name}/{mode}/{precision}"]
        seconds = timing.median
        flops = model_flops_per_token(args.dim, args.depth, seq) * seq * batch * (3 if mode == "train" else 1)
        peak = args.peak.get(precision)
        rows.append(
            {
                "seq": seq,
                "batch": batch,
                "mode": mode,
                "precision": precision + ("+compile" if args.compile else ""),
                "system": name,
                "ms": 1e3 * seconds,
                "tokens_per_s": seq * batch / seconds,
                "tflops": flops / seconds / 1e12,
                "mfu": None if peak is None else flops / seconds / peak,
                "rounds_ms": [round(1e3 * t, 1) for t in timing.seconds],
            }
        )
    add_ratios(rows)
    if args.profile:
        for name in [n for n in ("tabrasa", "timm") if n in systems]:
            for precision in args.precisions:
                if (name, "train", precision) in cells:
                    split = op_breakdown(cells[(name, "train", precision)])
                    args.profiles.append(
                        {"seq": seq, "batch": batch, "system": name, "precision": precision, **split}
                    )
    return rows


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """tabrasa's tokens/s over each peer's, at the same shape, mode and precision, and over timm fp32."""
    by_key = {(r["seq"], r["mode"], r["precision"], r["system"]): r for r in rows}
    for r in rows:
        ours = by_key.get((r["seq"], r["mode"], r["precision"], "tabrasa"))
        r["tabrasa_over_this"] = None if ours is None else ours["tokens_per_s"] / r["tokens_per_s"]
        timm32 = by_key.get((r["seq"], r["mode"], "fp32", "timm"))
        if r["system"] == "tabrasa" and timm32 is not None:
            r["over_timm_fp32"] = r["tokens_per_s"] / timm32["tokens_per_s"]


def parse_shapes(text: str) -> list[tuple[int, int]]:
    try:
        return [(int(s), int(b)) for s, b in (part.split("x") for part in text.split(","))]
    except ValueError:
        raise SystemExit(f"--shapes {text!r}: expected seq x batch pairs such as 196x16,512x8") from None


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--shapes", default="196x16,512x8", help="seq x batch, comma separated")
    parser.add_argument("--systems", default="tabrasa,timm,bert,bert-p0")
    parser.add_argument("--modes", default="train,infer")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--int8", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--compile", action="store_true", help="torch.compile every system (slow to start)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="cpu or cuda; int8 and the profiler are CPU-only")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--peak-size", type=int, default=4096, help="side of the GEMM that measures the peak")
    parser.add_argument(
        "--part",
        choices=("all", "speed", "bf16-task"),
        default="all",
        help="speed: the throughput table; bf16-task: bf16's accuracy cost on IMDB sentiment (real reviews)",
    )
    parser.add_argument(
        "--profile",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="torch.profiler breakdown of one training step of tabrasa and timm",
    )
    parser.add_argument("--out", default="results/bench_throughput.json")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes: checks the script, measures nothing"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.dim, args.depth, args.heads, args.shapes = 32, 1, 2, "8x2"
        args.repeats, args.warmup, args.peak_size = 2, 1, 256
    if args.device != "cpu" and (args.int8 or args.profile):
        raise SystemExit(
            f"--device {args.device}: int8 dynamic quantization and the CPU profiler run on CPU "
            "only; add --no-int8 --no-profile"
        )
    args.systems, args.modes = args.systems.split(","), args.modes.split(",")
    args.precisions = args.precisions.split(",")
    args.profiles = []
    env = setup(args.threads)
    env["device"] = torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device
    with merged_json(args.out) as result:
        result["environment"] = env
        if args.part in ("all", "speed"):
            result.update(speed(args))
        if args.part in ("all", "bf16-task"):
            from benchmarks.bench_tasks import bf16_accuracy_cost

            result["bf16_accuracy"] = bf16_accuracy_cost(smoke=args.smoke)
            print("bf16 accuracy cost (IMDB):", result["bf16_accuracy"])
    print(f"wrote {args.out}")
    return result


def speed(args: argparse.Namespace) -> dict[str, Any]:
    peak = {
        "fp32": matmul_peak(torch.float32, args.peak_size, device=torch.device(args.device)),
        "bf16": matmul_peak(torch.bfloat16, args.peak_size, device=torch.device(args.device)),
    }
    args.peak = peak
    print(f"matmul peak: fp32 {peak['fp32'] / 1e9:.0f} GFLOP/s, bf16 {peak['bf16'] / 1e9:.0f} GFLOP/s")
    rows = [row for seq, batch in parse_shapes(args.shapes) for row in bench_shape(args, seq, batch)]
    columns = [
        "seq",
        "batch",
        "mode",
        "precision",
        "system",
        "ms",
        "tokens_per_s",
        "mfu",
        "tabrasa_over_this",
        "over_timm_fp32",
    ]
    print_table(rows, columns)
    if args.profiles:
        print("\ntraining step, ms by kind of work (torch.profiler self time):")
        print_table(args.profiles, list(args.profiles[0]))
    return {
        "config": {k: v for k, v in vars(args).items() if k not in ("peak", "out", "profiles")},
        "matmul_peak_flops": peak,
        "rows": rows,
        "profile_ms_per_train_step": args.profiles,
    }


if __name__ == "__main__":
    main()
