"""One run of a learning-curve plan with overrides, to size the plan before its sweep runs.

    python -m benchmarks.calibrate_plan protein sequence_lstm --lr 3e-3 --steps 600 \
        --out results/standard_calibration/width64.jsonl -- --model.init_args.backbone.init_args.dim 64

Trains one arm of one modality as a sweep of `--plan` does (its data and batch, no validation while
training, the final weights scored on validation and test), at `--fraction`, `--lr`, `--seed` and
`--steps`, with any further overrides after `--`, and appends the run's scores, seconds and overrides to
--out as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.evidence.arms import MODALITIES, PLANS, SWEEPS
from benchmarks.evidence.cli_run import fit_and_score, quiet_lightning
from benchmarks.evidence.learning_curves import RunKey, cli_args

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("modality", choices=list(MODALITIES))
    parser.add_argument("arm")
    parser.add_argument("--plan", choices=PLANS, default="wide")
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    extra = argv[split + 1 :]  # overrides for the run, after --
    import torch

    torch.set_num_threads(1)
    quiet_lightning()
    modality = MODALITIES[args.modality]
    key = RunKey(modality=args.modality, arm=args.arm, fraction=args.fraction, lr=args.lr, seed=args.seed)
    overrides = cli_args(ROOT, modality, key, SWEEPS[args.plan])
    overrides[overrides.index("--trainer.max_steps") + 1] = str(args.steps)
    start = time.perf_counter()
    scores = fit_and_score(ROOT / modality.config, overrides + extra)
    record = {"modality": args.modality, "arm": args.arm, "frac": args.fraction, "lr": args.lr,
              "seed": args.seed, "steps": args.steps, "extra": extra, **scores,
              "wall": round(time.perf_counter() - start, 1)}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
