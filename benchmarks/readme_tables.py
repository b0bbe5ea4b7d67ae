"""Rewrite the result tables of README.md and of every docs page from the committed files under results/.

    python -m benchmarks.readme_tables           # rewrite every marked table in README.md and docs/**/*.md
    python -m benchmarks.readme_tables --check   # exit 1, naming page and table, when one differs

The tables and their sources are declared in `benchmarks/evidence/readme_tables.py`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.evidence.readme_tables import render_documents, stale_documents

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="report stale tables, change nothing")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout whose README.md and docs/ are read"
    )
    parser.add_argument("--results", type=Path, default=None, help="the sources (default: ROOT/results)")
    args = parser.parse_args(argv)
    results = args.results if args.results is not None else args.root / "results"
    if args.check:
        found = stale_documents(args.root, results)
        for page, names in found.items():
            print(f"stale tables in {page}: {', '.join(names)}")
        if found:
            print("run `python -m benchmarks.readme_tables` to rewrite them from results/")
            return 1
        return 0
    for page in render_documents(args.root, results):
        print(f"rewrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
