"""Which selective-scan path trains a Mamba backbone fastest on this machine: the parallel (odd/even) scan,
the sequential loop that stores every state, or the chunked loop that recomputes them (chunked_scan.py).
All compute the same outputs (tests/backbone/test_mamba.py, test_chunked_scan.py); `scan: auto` picks one
per device, and this script is the measurement behind that choice.

A whole backbone (configs/backbone/mamba.yaml's depth 3, bidirectional), forward + backward on a batch of
32 at the widths and lengths the learning curves and presets use, fp32, the paths interleaved round by
round in one process (benchmarks.evidence.timing), median seconds a step. The long-range claim's shape
(32 wide at 1,024 tokens, batch 16, depth 2) is timed with `--shapes 32x1024 --batch 16 --depth 2`.

    python -m benchmarks.bench_mamba_scan --out results/mixers/mamba_scan.json   # CPU, a few minutes
    python -m benchmarks.bench_mamba_scan --smoke                                # seconds, checks the script
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.bench_common import finished, setup, timing_parser
from benchmarks.evidence.timing import interleaved
from tabrasa.backbone.mamba import Mamba
from tabrasa.backbone.mamba_config import MambaConfig
from tabrasa.backbone.selective_scan import resolved_scan

PATHS = ("parallel", "sequential", "chunked")
CPU_PATH = resolved_scan("auto", torch.device("cpu"))  # what `scan: auto` runs on a CPU


def training_step(model: Mamba, batch: int, length: int) -> Callable[[], None]:
    x = torch.randn(batch, length, model.config.dim)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        model(x).sum().backward()

    return step


def compare(shapes: list[tuple[int, int]], batch: int, depth: int, repeats: int) -> list[dict[str, Any]]:
    """One row per (dim, length): each path's median seconds a step, and the CPU path's speed-up over each."""
    rows = []
    for dim, length in shapes:
        models = {path: Mamba(MambaConfig(dim=dim, depth=depth, scan=path)) for path in PATHS}
        for path in PATHS[1:]:
            models[path].load_state_dict(models[PATHS[0]].state_dict())
        timings = interleaved(
            {path: training_step(model, batch, length) for path, model in models.items()},
            torch.device("cpu"),
            repeats,
            warmup=1,
        )
        seconds = {path: timings[path].median for path in PATHS}
        rows.append({
            "dim": dim, "length": length, "batch": batch, "depth": depth,
            "seconds": seconds,
            "chunked_speedup": {p: seconds[p] / seconds[CPU_PATH] for p in PATHS if p != CPU_PATH},
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = timing_parser(__doc__, repeats=5)
    shapes = ["64x26", "64x128", "128x128", "128x256"]  # the curves' audio and text, the presets' text
    p.add_argument("--shapes", nargs="+", default=shapes, help="DIMxLENGTH, each timed")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--depth", type=int, default=3)
    args = p.parse_args(argv)
    machine = setup(args.threads)
    if args.smoke:
        args.shapes, args.batch, args.depth, args.repeats = ["16x12"], 2, 1, 1
    shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.shapes]
    rows = compare(shapes, args.batch, args.depth, args.repeats)  # type: ignore[arg-type]
    settings = vars(args) | {"out": None}
    return finished(
        "benchmarks.bench_mamba_scan", argv, args.out, machine=machine, settings=settings, rows=rows
    )


if __name__ == "__main__":
    main()
