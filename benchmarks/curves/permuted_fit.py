"""Does a permuted run that stays near chance fail to fit its training split, or fit it and not generalise?

    python -m benchmarks.curves.permuted_fit --modality audio --arm spectrogram_cnn --fraction 0.3 \\
        --lr 3e-3 --epochs 12

The permutation test reads what the shuffle takes from an arm's held-out accuracy. When that is nearly
everything (the spectrogram CNN's permuted runs score 3–5% where a constant guess scores 2.9%), two readings
differ in what they say about the arm: its training accuracy stays near chance too (the shuffled grid
defeats its optimiser: nothing was learned), or it climbs while validation does not (the arm fits the
shuffled clips but what it learns from them does not carry to new ones: the prior is what generalised).

This trains the arm twice from the same seed and rate, ordered and shuffled, through the curve runner's own
run (`train_and_score`: the same CLI arguments, epoch cap and learning-rate schedule as a sweep run), stops
each after `--epochs` epochs, and records every epoch's training accuracy (on the augmented clips, with
dropout, as training sees them) beside its validation accuracy. The record and the command that wrote it go
to results/permutation/fit/<modality>_<arm>.json; a few epochs are enough to tell the readings apart, not
to rank arms. It never touches results/curves/runs.jsonl.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytorch_lightning as pl

from benchmarks.curves.early_stopped_run import MONITOR, RunKey, train_and_score
from benchmarks.curves.plan import MODALITIES

ROOT = Path(__file__).resolve().parents[2]
TRAIN_MONITOR = "train/acc"


class EpochAccuracies(pl.Callback):
    """Each epoch's training and validation accuracy; stops the run after `epochs` epochs."""

    def __init__(self, epochs: int) -> None:
        if epochs < 1:
            raise ValueError(f"epochs={epochs}: give at least one epoch to record")
        self.epochs = epochs
        self.rows: list[dict[str, float | int]] = []

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        # Here both are the finished epoch's: validation ran at the epoch's last batch and the training
        # metric's epoch mean is computed once the epoch's end is reached.
        metrics = trainer.callback_metrics
        missing = [name for name in (TRAIN_MONITOR, MONITOR) if name not in metrics]
        if missing:
            raise KeyError(f"epoch {trainer.current_epoch}: the task logged no {missing}; both are needed")
        self.rows.append(
            {
                "epoch": trainer.current_epoch,
                "train_acc": round(float(metrics[TRAIN_MONITOR]), 4),
                "val_acc": round(float(metrics[MONITOR]), 4),
            }
        )
        if len(self.rows) >= self.epochs:
            trainer.should_stop = True


def fit_record(key: RunKey, epochs: int) -> dict[str, Any]:
    """One run of `key` stopped after `epochs` epochs: its epochs and what the curve runner records."""
    plan = MODALITIES[key.modality]
    accuracies = EpochAccuracies(epochs)
    with tempfile.TemporaryDirectory() as folder:
        record = train_and_score(
            ROOT,
            plan.arm(key.arm),
            key,
            plan.protocol,
            plan.permutation_flag,
            runs_folder=Path(folder),
            callbacks=[accuracies],
        )
    return {"run": record, "epochs": accuracies.rows}


def paired_keys(modality: str, arm: str, fraction: float, lr: float, seed: int) -> tuple[RunKey, RunKey]:
    """The ordered run and its shuffled twin: the same arm, fraction, rate and seed. An arm the modality
    does not have fails here, naming the arms it has, before any data is built."""
    MODALITIES[modality].arm(arm)
    ordered = RunKey(modality=modality, arm=arm, fraction=fraction, lr=lr, seed=seed)
    return ordered, replace(ordered, permuted=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--modality", choices=sorted(MODALITIES), required=True)
    parser.add_argument("--arm", required=True)
    parser.add_argument("--fraction", type=float, required=True)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--out", type=Path, help="default: results/permutation/fit/<modality>_<arm>.json")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    keys = paired_keys(args.modality, args.arm, args.fraction, args.lr, args.seed)
    command = shlex.join(["python", "-m", "benchmarks.curves.permuted_fit", *argv])
    record: dict[str, Any] = {"command": command}
    for key in keys:
        name = "permuted" if key.permuted else "ordered"
        record[name] = found = fit_record(key, args.epochs)
        for row in found["epochs"]:
            print(
                f"{name:>8} epoch {row['epoch']:>3}: "
                f"train {row['train_acc']:.3f}  validation {row['val_acc']:.3f}",
                flush=True,
            )
    out = args.out or ROOT / "results" / "permutation" / "fit" / f"{args.modality}_{args.arm}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
