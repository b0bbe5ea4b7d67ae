"""Rewrite the README's result tables from the committed files under results/.

    python scripts/readme_tables.py           # rewrite every marked table in README.md
    python scripts/readme_tables.py --check   # exit 1, naming them, when a table differs from its source

The tables and their sources are declared in `tabrasa/evidence/readme_tables.py`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tabrasa.evidence.readme_tables import render, stale

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="report stale tables, change nothing")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    text = args.readme.read_text()
    if args.check:
        names = stale(text, args.results)
        if names:
            print(f"stale README tables (run scripts/readme_tables.py): {', '.join(names)}")
            return 1
        return 0
    args.readme.write_text(render(text, args.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
