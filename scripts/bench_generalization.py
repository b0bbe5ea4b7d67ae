"""Learning curves on four modalities: the transformer against CNN and LSTM baselines.

    python scripts/bench_generalization.py --quick              # ≤ 20 minutes on 2 CPU cores
    python scripts/bench_generalization.py --full --out results/full   # for GPUs (add trainer flags in YAML)
    python scripts/bench_generalization.py --smoke --modalities text   # seconds; used by the tests

Writes runs.jsonl (every run; rerunning resumes), learning_curves.json, learning_curves.md and one
learning_curve_<modality>.png per modality into --out.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from tabrasa.evidence.arms import MODALITIES, SWEEPS
from tabrasa.evidence.learning_curve_report import markdown_table, plot_curves
from tabrasa.evidence.learning_curves import RunLog, run_sweep, summarise

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group()
    for name in SWEEPS:
        mode.add_argument(f"--{name}", dest="mode", action="store_const", const=name)
    parser.add_argument("--modalities", nargs="+", default=list(MODALITIES), choices=list(MODALITIES))
    parser.add_argument(
        "--out", type=Path, default=None, help="output folder (default results/generalization_<mode>)"
    )
    args = parser.parse_args(argv)
    mode = args.mode or "quick"
    sweep = SWEEPS[mode]
    out = args.out or ROOT / "results" / f"generalization_{mode}"
    out.mkdir(parents=True, exist_ok=True)
    log = RunLog(out / "runs.jsonl")
    run_sweep(ROOT, args.modalities, sweep, log)
    points = summarise(log, args.modalities, sweep)
    (out / "learning_curves.json").write_text(json.dumps([asdict(p) for p in points], indent=1))
    table = markdown_table(points)
    (out / "learning_curves.md").write_text(table)
    plots = plot_curves(points, out)
    print(table)
    print("plots:", ", ".join(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in plots))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
