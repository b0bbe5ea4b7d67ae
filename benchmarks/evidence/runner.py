"""Run the claims at one scale, print the table, write results/claims.json and results/claims.md."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from benchmarks.evidence.claims import CLAIMS
from benchmarks.evidence.presets import PRESETS, SEEDS
from benchmarks.evidence.report import ClaimResult, markdown_table, write


def select(only: Sequence[str] | None) -> list[str]:
    if not only:
        return list(CLAIMS)
    unknown = [key for key in only if key not in CLAIMS]
    if unknown:
        raise ValueError(f"unknown claim(s) {unknown}; choose among {list(CLAIMS)}")
    return [key for key in CLAIMS if key in only]


def run_claims(
    scale: str, device: torch.device, threads: int, out_dir: Path, only: Sequence[str] | None = None
) -> list[ClaimResult]:
    if scale not in PRESETS:
        raise ValueError(f"scale={scale!r} is not known; choose one of {list(PRESETS)}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda was asked for but torch sees no GPU; use --device cpu")
    torch.set_num_threads(threads)
    settings, seeds = PRESETS[scale](), SEEDS[scale]
    results = []
    for key in select(only):
        start = time.perf_counter()
        print(f"[{scale}] {key} …", file=sys.stderr, flush=True)
        result = CLAIMS[key](settings[key], seeds, device)
        result.seconds = time.perf_counter() - start
        print(
            f"[{scale}] {key}: {result.measured} → {result.verdict} ({result.seconds:.0f} s)", file=sys.stderr
        )
        results.append(result)
    used = {
        "scale": scale,
        "device": str(device),
        "threads": threads,
        "seeds": list(seeds),
        "torch": torch.__version__,
        "claims": {key: dataclasses.asdict(settings[key]) for key in select(only)},
    }
    write(results, out_dir, used)
    return results


def main_table(results: Sequence[ClaimResult]) -> str:
    total = sum(r.seconds for r in results)
    return f"{markdown_table(results)}\n\n{len(results)} claims in {total:.0f} s"
