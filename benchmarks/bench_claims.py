"""Measure each numeric claim of the articles at small scale: claim | article's figure | measured | verdict.

    python -m benchmarks.bench_claims              # quick, the README's table: 3 seeds, 4 rates per arm
    python -m benchmarks.bench_claims --smoke      # seconds: checks that every claim still runs
    python -m benchmarks.bench_claims --full --device cuda
    python -m benchmarks.bench_claims --only heads,layernorm   # merged into the claims.json in --out
    python -m benchmarks.bench_claims --only long_range_mixers --run-cache ~/.cache/tabrasa/claim-runs

Writes results/claims.json (every number, each arm's learning-rate sweep, each claim's seconds and the
settings behind them) and results/claims.md (the table). The verdict rule: benchmarks/evidence/report.py.
Beside other jobs, run it with --threads 1: oversubscribed threads slow its tiny steps many times over.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from benchmarks.evidence.claims import run_cache
from benchmarks.evidence.runner import main_table, run_claims


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    scale = parser.add_mutually_exclusive_group()
    scale.add_argument("--smoke", dest="scale", action="store_const", const="smoke", help="tiny, seconds")
    scale.add_argument("--quick", dest="scale", action="store_const", const="quick", help="default, CPU")
    scale.add_argument("--full", dest="scale", action="store_const", const="full", help="larger, for a GPU")
    parser.set_defaults(scale="quick")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (int8 always runs on the CPU)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (torch.set_num_threads)")
    parser.add_argument("--only", default="", help="comma-separated claim keys, e.g. heads,layernorm")
    parser.add_argument("--out", type=Path, default=Path("results"), help="folder for claims.json and .md")
    parser.add_argument(
        "--run-cache",
        type=Path,
        default=None,
        help="keep each finished run of long_range_mixers here, so a killed run resumes per run",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    only = [key.strip() for key in args.only.split(",") if key.strip()]
    run_cache.use_folder(args.run_cache)
    results = run_claims(args.scale, torch.device(args.device), args.threads, args.out, only)
    print(main_table(results))


if __name__ == "__main__":
    main()
