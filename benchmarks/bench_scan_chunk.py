"""How many numbers one chunk of the CPU's selective scan should hold (chunked_scan.CHUNK_ELEMENTS).

The chunked scan (tabrasa/backbone/chunked_scan.py) works on (chunk, B, E, N) buffers: longer chunks mean
fewer Python steps and larger vectorised reductions, shorter ones keep each buffer in the core's cache.
Which wins depends on the cache, so it is measured: one scan, forward + backward, at the shapes the
learning curves and presets train, for each buffer size in `--elements`, the sizes interleaved round by
round in one process (benchmarks.evidence.timing), median milliseconds a scan. Every size computes the
same outputs (tests/backbone/test_chunked_scan.py checks chunk lengths 1 to the whole sequence).

    python -m benchmarks.bench_scan_chunk --out results/mixers/scan_chunk.json   # CPU, a few minutes
    python -m benchmarks.bench_scan_chunk --smoke                                # seconds, checks the script
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.bench_common import finished, setup, timing_parser
from benchmarks.evidence.timing import interleaved
from tabrasa.backbone.chunked_scan import CHUNK_ELEMENTS, chunk_length, chunked_scan

# batch × tokens × d_inner: the image, audio and text curves at 64 wide (d_inner 128), the IMDB preset
SHAPES = ["64x17x128", "64x26x128", "32x128x128", "32x256x256"]
ELEMENTS = [1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21]
STATE = 16  # configs/backbone/mamba.yaml's d_state


def scan_step(batch: int, length: int, channels: int, chunk: int) -> Callable[[], None]:
    generator = torch.Generator().manual_seed(0)
    u = torch.randn(batch, length, channels, generator=generator, requires_grad=True)
    delta = (0.1 * torch.rand(batch, length, channels, generator=generator)).requires_grad_()
    a = (-2 * torch.rand(channels, STATE, generator=generator)).requires_grad_()
    b, c = (torch.randn(batch, length, STATE, generator=generator, requires_grad=True) for _ in range(2))

    def step() -> None:
        chunked_scan(u, delta, a, b, c, chunk=chunk).square().sum().backward()

    return step


def compare(shapes: list[tuple[int, int, int]], elements: list[int], repeats: int) -> list[dict[str, Any]]:
    """One row per shape: the chunk length each buffer size gives and its median milliseconds a scan."""
    rows = []
    for batch, length, channels in shapes:
        chunks = {size: chunk_length(batch, channels, STATE, length, size) for size in elements}
        steps = {str(size): scan_step(batch, length, channels, chunk) for size, chunk in chunks.items()}
        timings = interleaved(steps, torch.device("cpu"), repeats, warmup=1)
        ms = {size: round(1000 * timings[str(size)].median, 2) for size in elements}
        fastest = min(ms, key=ms.__getitem__)
        default = round(ms[CHUNK_ELEMENTS] / ms[fastest], 3) if CHUNK_ELEMENTS in ms else None
        rows.append({
            "batch": batch, "length": length, "channels": channels, "state": STATE,
            "chunk": {str(size): chunks[size] for size in elements},
            "milliseconds": {str(size): ms[size] for size in elements},
            "fastest": fastest,
            "default_over_fastest": default,
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = timing_parser(__doc__, repeats=7)
    p.add_argument("--shapes", nargs="+", default=SHAPES, help="BATCHxLENGTHxCHANNELS, each timed")
    p.add_argument("--elements", nargs="+", type=int, default=ELEMENTS, help="buffer sizes to compare")
    args = p.parse_args(argv)
    machine = setup(args.threads)
    if args.smoke:
        args.shapes, args.elements, args.repeats = ["2x9x8"], [16, 1 << 10], 1
    shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.shapes]
    rows = compare(shapes, args.elements, args.repeats)  # type: ignore[arg-type]
    settings = vars(args) | {"out": None}
    return finished(
        "benchmarks.bench_scan_chunk", argv, args.out,
        machine=machine, default_elements=CHUNK_ELEMENTS, settings=settings, rows=rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
