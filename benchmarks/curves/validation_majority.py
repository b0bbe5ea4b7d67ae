"""The validation split's majority-class share: what a constant guess scores there, the floor a run must
clear to count as trained (benchmarks.curves.permutation_rate).

Every run records it as `val_majority`, from the labels of the validation split it was scored on. Rows
logged before runs recorded it get it here:

    python -m benchmarks.curves.validation_majority results/curves/runs.jsonl

which builds each modality's data once, exactly as its first network arm's run builds it, and adds the
share to that modality's rows that lack it. Every arm of a modality is scored on the same validation split
(the protocol's data settings, the data module's own seed); a modality whose rows disagree on its size is
refused rather than given one share. Run it while no sweep appends to the log: it rewrites the file.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.curves.early_stopped_run import RunKey, run_args
from benchmarks.curves.plan import MODALITIES, ModalityPlan
from benchmarks.evidence.cli_run import quiet_lightning
from benchmarks.evidence.majority import majority_share
from tabrasa.training.lightning_cli import build_cli

ROOT = Path(__file__).resolve().parents[2]


def modality_majority(root: Path, plan: ModalityPlan) -> float:
    """The validation majority share of the modality's data, built as its first network arm's run does."""
    arm = next(a for a in plan.arms if not a.is_floor)
    key = RunKey(modality=plan.name, arm=arm.name, fraction=1.0, lr=plan.protocol.rates[0], seed=0)
    args = run_args(root, arm, key, plan.protocol, plan.permutation_flag)
    cli = build_cli(args, run=False, save_config=False)
    cli.datamodule.prepare_data()
    cli.datamodule.setup("fit")
    return majority_share(cli.datamodule.splits["validation"]["label"])


def backfill(rows: list[dict[str, Any]], share: Callable[[ModalityPlan], float]) -> dict[str, float]:
    """Add `val_majority` to the rows lacking it, one `share` per modality; returns the shares it used."""
    used: dict[str, float] = {}
    for name in sorted({r["modality"] for r in rows if "val_majority" not in r}):
        mine = [r for r in rows if r["modality"] == name]
        sizes = sorted({int(r["n_val"]) for r in mine})
        if len(sizes) != 1:
            raise ValueError(
                f"modality {name}: its runs were validated on {sizes} examples, not one split; "
                f"a single majority share would misjudge some of them"
            )
        known = {float(r["val_majority"]) for r in mine if "val_majority" in r}
        if len(known) > 1:
            raise ValueError(f"modality {name}: its runs record the validation majority as {sorted(known)}")
        used[name] = known.pop() if known else share(MODALITIES[name])
        for row in mine:
            row.setdefault("val_majority", used[name])
    return used


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("log", type=Path, help="the sweep's runs.jsonl")
    args = parser.parse_args(argv)
    quiet_lightning()
    rows = [json.loads(line) for line in args.log.read_text().splitlines() if line.strip()]
    used = backfill(rows, lambda plan: modality_majority(ROOT, plan))
    args.log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for name, value in used.items():
        print(f"{name}: validation majority share {value:.4f}")


if __name__ == "__main__":
    main()
