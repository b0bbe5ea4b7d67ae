"""The cost of generality: every modality's shipped config trained with the transformer and with its
inductive-bias baseline (same data module, tokenizer, budget and test set), 2 seeds, interleaved. With
--curves, text and protein run only the baseline (CNN or LSTM) the curves' validation prefers at full data.

    python scripts/bench_generality.py                                   # all four; results/generality/
    python scripts/bench_generality.py --modalities image --curves results/generalization_standard
    python scripts/bench_generality.py --modalities text --extra --trainer.max_steps 2   # a smoke run

Each run is `tabrasa fit --config <config> --model.init_args.backbone configs/backbone/<arm>.yaml`, as a
user types it (validation, the best checkpoint by val/acc, tested once). With --curves, each arm trains
at the rate the standard learning-curve sweep chose for it on validation at full data; otherwise at the
config's rate. Writes runs.jsonl (with every run card; rerunning resumes), generality.json and
generality.md into --out.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from tabrasa.evidence.arms import MODALITIES, SWEEPS
from tabrasa.evidence.generality import (
    KEY_FIELDS,
    SEEDS,
    generality_table,
    run_generality,
    summarise_generality,
)
from tabrasa.evidence.learning_curves import KEY_FIELDS as CURVE_FIELDS
from tabrasa.evidence.rate_sweep import RunLog

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--modalities", nargs="+", default=list(MODALITIES), choices=list(MODALITIES))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--curves", type=Path, default=None, help="a standard-mode learning-curve folder")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "generality")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="overrides for every run")
    args = parser.parse_args(argv)
    if args.curves is not None and not (args.curves / "runs.jsonl").is_file():
        parser.error(
            f"--curves {args.curves}: no runs.jsonl there; run bench_generalization.py --standard first"
        )
    curves = RunLog(args.curves / "runs.jsonl", CURVE_FIELDS) if args.curves else None
    log = RunLog(args.out / "runs.jsonl", KEY_FIELDS)
    seeds = tuple(args.seeds)
    run_generality(ROOT, args.modalities, log, curves, SWEEPS["standard"], seeds, args.extra)
    rows = summarise_generality(log, args.modalities, seeds)
    (args.out / "generality.json").write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    table = generality_table(rows)
    (args.out / "generality.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
