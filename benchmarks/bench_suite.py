"""The test suite's own cost: wall time and counts of the fast core (or any marker expression), measured.

    python -m benchmarks.bench_suite                          # the fast core: not slow, not distributed
    python -m benchmarks.bench_suite --marks "" --out results/suite/full.json

Runs pytest in a child process from the repository root and writes OUT (JSON): the command, wall seconds,
the passed/failed/skipped counts from pytest's summary line, the machine, its load average before and after
(a figure measured on busy cores says so) and the commit. Exits with pytest's status, so a failing suite
never writes a figure that looks like a green one without saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tabrasa.io import atomic_write
from tabrasa.training.run_card import git_state, load_average

FAST_CORE = "not slow and not distributed"
# pytest's last line, e.g. "= 1129 passed, 3 skipped, 2 warnings in 101.86s (0:01:41) ="
OUTCOME = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--marks", default=FAST_CORE, help='pytest -m expression ("" for the whole suite)')
    parser.add_argument("--out", type=Path, default=Path("results/suite/fast_core.json"))
    return parser.parse_args(argv)


def outcome_counts(summary: str) -> dict[str, int]:
    """pytest's final summary line → {"passed": N, "failed": N, ...} ("error" and "errors" count as one)."""
    counts: dict[str, int] = {}
    for number, word in OUTCOME.findall(summary):
        key = "errors" if word.startswith("error") else word
        counts[key] = counts.get(key, 0) + int(number)
    return counts


def measure(marks: str, root: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if marks:
        command += ["-m", marks]
    load_before = load_average()
    started = time.monotonic()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    seconds = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if OUTCOME.search(line)]
    return {
        "command": ["python", "-m", "pytest", *command[3:]],
        "marks": marks,
        "returncode": done.returncode,
        "wall_seconds": round(seconds, 1),
        "counts": outcome_counts(lines[-1] if lines else ""),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_1min": {"before": load_before, "after": load_average()},
        "git": git_state(root),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    result = measure(args.marks, root)
    result["written_by"] = "python -m benchmarks.bench_suite" + (
        f' --marks "{args.marks}"' if args.marks != FAST_CORE else ""
    )
    text = json.dumps(result, indent=2) + "\n"
    atomic_write(args.out, lambda tmp: tmp.write_text(text))
    print(json.dumps(result, indent=2))
    return result["returncode"]


if __name__ == "__main__":
    raise SystemExit(main())
