"""One benchmark run through the same CLI a user types: a task config plus overrides, trained for a fixed
number of steps, then scored on the whole validation and test splits with the final weights."""

from __future__ import annotations

import logging
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Every benchmark run trains for fixed steps with no selection during training: no validation, no logger,
# no checkpoints (nothing of a run is kept but its scores), no progress bar.
QUIET_TRAINER = [
    "--trainer.max_epochs", "-1",
    "--trainer.limit_val_batches", "0",
    "--trainer.logger", "false",
    "--trainer.enable_progress_bar", "false",
    "--trainer.enable_model_summary", "false",
    "--trainer.callbacks", "[]",
]  # fmt: skip


def quiet_lightning() -> None:
    # Runs pass their CLI arguments as `args=`; Lightning warns about that whenever sys.argv is not empty.
    warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
    for name in ("pytorch_lightning", "pytorch_lightning.utilities.rank_zero", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def trained(config: Path, overrides: list[str]) -> Iterator[tuple[Any, float]]:
    """`tabrasa fit --config config <overrides>` quietly (no validation, logger or checkpoints), with the
    whole validation set switched back on for scoring afterwards; yields (the LightningCLI, seconds of
    `fit`, data set-up included). `loop_seconds(cli)` gives the training loop's share alone. Whatever the
    run writes goes to a temporary folder removed on exit."""
    from pytorch_lightning.callbacks import Timer

    from tabrasa.training.lightning_cli import build_cli

    with tempfile.TemporaryDirectory(prefix="tabrasa-bench-") as scratch:
        cli = build_cli(
            ["--config", str(config), *overrides, *QUIET_TRAINER],
            run=False,
            trainer_defaults_override={"callbacks": [], "default_root_dir": scratch},
            save_config=False,
        )
        # Lightning's Timer runs from the first to the last training batch: the loop without data set-up
        # (vocabularies, caches, synthesis), which is what an equal-wall-time comparison must hold equal.
        cli.trainer.callbacks.append(Timer(verbose=False))
        start = time.perf_counter()
        cli.trainer.fit(cli.model, datamodule=cli.datamodule)
        seconds = time.perf_counter() - start
        cli.trainer.limit_val_batches = 1.0  # off while training, on for the final score
        yield cli, seconds


def loop_seconds(cli: Any) -> float:
    """Seconds the training loop of a `trained` run took (set-up and scoring excluded)."""
    from pytorch_lightning.callbacks import Timer

    timers = [c for c in cli.trainer.callbacks if isinstance(c, Timer)]
    return float(timers[-1].time_elapsed("train"))


def fit_and_score(config: Path, overrides: list[str]) -> dict[str, object]:
    """A quiet fit (`trained`) scored with its final weights; returns training examples, backbone
    parameters (all and trainable), val/test accuracy, test macro-F1, training seconds and steps."""
    with trained(config, overrides) as (cli, seconds):
        val = cli.trainer.validate(cli.model, datamodule=cli.datamodule, verbose=False)[0]
        test = cli.trainer.test(cli.model, datamodule=cli.datamodule, verbose=False)[0]
    backbone = list(cli.model.backbone.parameters())
    labels = Counter(int(label) for label in cli.datamodule.splits["test"]["label"])
    return {
        "train_examples": len(cli.datamodule.splits["train"]),
        "params": sum(p.numel() for p in backbone),
        "trainable_backbone_params": sum(p.numel() for p in backbone if p.requires_grad),
        "val_acc": float(val["val/acc"]),
        "test_acc": float(test["test/acc"]),
        "test_f1": float(test["test/f1"]),
        # the floor a run is read against: the share of the test split's most common class
        "test_majority": max(labels.values()) / sum(labels.values()),
        "classes": len(cli.datamodule.class_names),
        "train_seconds": round(seconds, 2),
        "steps": int(cli.trainer.global_step),  # what the run trained for: the plan's steps, as run
    }
