"""The cost of generality: every modality's shipped config trained with the transformer and with its
inductive-bias baseline (same data module, tokenizer, budget and test set), 2 seeds, interleaved. With
--curves, text and protein run only the baseline (CNN or LSTM) the curves' validation prefers at full data.

    python -m benchmarks.bench_generality                                   # all four; results/generality/
    python -m benchmarks.bench_generality --modalities image --curves results/generalization_wide
    python -m benchmarks.bench_generality --curves results/generalization_wide --max-steps 1000
    python -m benchmarks.bench_generality --modalities text --max-steps 4 --extra --data.init_args.limit 64

Each run is `tabrasa fit --config <config> --model.init_args.backbone configs/backbone/<arm>.yaml`, as a
user types it (validation, the best checkpoint by val/acc, tested once). With --curves, each arm trains
at the rate the learning-curve sweep chose for it on validation at full data; otherwise at the config's
rate; the curves replay under the sweep that wrote them, named by their folder (generalization_<sweep>)
or by --curves-sweep. --max-steps N caps every fit at N steps (the config's schedule planned over them,
validation at each quarter): the same budget for both arms when the configs as shipped cost too much
here. Writes runs.jsonl (with every run card; rerunning resumes), generality.json and
generality.md into --out.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from benchmarks.evidence.arms import MODALITIES, SWEEPS
from benchmarks.evidence.generality import (
    KEY_FIELDS,
    SEEDS,
    check_step_cap,
    generality_table,
    run_generality,
    step_cap_args,
    summarise_generality,
)
from benchmarks.evidence.learning_curves import KEY_FIELDS as CURVE_FIELDS
from benchmarks.evidence.rate_sweep import RunLog

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--modalities", nargs="+", default=list(MODALITIES), choices=list(MODALITIES))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument(
        "--curves",
        type=Path,
        default=None,
        help="a learning-curve folder (--wide's arms are the configs' width)",
    )
    parser.add_argument(
        "--curves-sweep",
        choices=list(SWEEPS),
        default=None,
        help="the sweep that wrote --curves (default: from its folder name, generalization_<sweep>)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "generality")
    parser.add_argument(
        "--max-steps", type=int, default=None, help="train every fit for this many steps (a multiple of 4)"
    )
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="overrides for every run")
    args = parser.parse_args(argv)
    if args.curves is not None and not (args.curves / "runs.jsonl").is_file():
        parser.error(f"--curves {args.curves}: no runs.jsonl there; run bench_generalization.py --wide first")
    curves = RunLog(args.curves / "runs.jsonl", CURVE_FIELDS) if args.curves else None
    # The curves replay under the protocol that wrote them (its rates and bracketing); another sweep's would
    # read a finished point as unfinished, or the reverse.
    sweep_name = args.curves_sweep
    if args.curves is not None and sweep_name is None:
        sweep_name = args.curves.name.removeprefix("generalization_")
        if sweep_name not in SWEEPS:
            choices = ", ".join(SWEEPS)
            parser.error(f"--curves {args.curves}: name the sweep that wrote it, --curves-sweep ({choices})")
    sweep = SWEEPS[sweep_name or "standard"]
    log = RunLog(args.out / "runs.jsonl", KEY_FIELDS)
    try:
        step_cap_args(args.max_steps)
        check_step_cap(log, args.max_steps)
    except ValueError as error:
        parser.error(f"--max-steps: {error}")
    seeds = tuple(args.seeds)
    run_generality(ROOT, args.modalities, log, curves, sweep, seeds, args.extra, args.max_steps)
    rows = summarise_generality(log, args.modalities, seeds)
    (args.out / "generality.json").write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    table = generality_table(rows)
    (args.out / "generality.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
