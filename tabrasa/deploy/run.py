"""A trained run, rebuilt for use: its config.yaml builds the model and data module, a checkpoint fills them.

A run folder is what `tabrasa fit` writes (`runs/NAME/version_N/` with `config.yaml` and `checkpoints/`).
The config is the one record of the tokenizer, backbone and head a checkpoint was trained with, so a
checkpoint without it is refused rather than guessed at. Every weight must load: a missing or unexpected key
is an error naming the keys, never a silent random init.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import yaml
from torch import nn

from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.training import load_checkpoint

CheckpointChoice = str  # "best", "last" or a path
BUILD_SECTIONS = ("seed_everything", "trainer", "model", "data", "checkpoint")


@dataclass
class TrainedRun:
    """model in eval mode on CPU; class_names None for regressors; where it came from, for reports;
    datamodule: the run's data (benchmarks read its test split; prediction never does)."""

    model: nn.Module
    tokenizer: Tokenizer
    class_names: Sequence[str] | None
    config_path: Path
    checkpoint_path: Path
    datamodule: Any = None


def find_config(run_or_checkpoint: Path) -> Path:
    """config.yaml of a run folder, or of the run a checkpoint file sits in (`RUN/checkpoints/x.ckpt`)."""
    folder = run_or_checkpoint if run_or_checkpoint.is_dir() else run_or_checkpoint.parent
    for candidate in (folder / "config.yaml", folder.parent / "config.yaml"):
        if candidate.is_file():
            return candidate
    raise UserError(
        f"{run_or_checkpoint} has no config.yaml beside it or in its run folder; the config records the "
        f"tokenizer, backbone and head the weights belong to. Give the run folder that `tabrasa fit` wrote "
        f"(runs/NAME/version_N), or copy its config.yaml next to the checkpoint"
    )


def find_checkpoint(run_or_checkpoint: Path, choice: CheckpointChoice = "best") -> Path:
    """The checkpoint file: the path itself, or `best` (best-*.ckpt, newest) / `last` (last.ckpt) of a run."""
    if run_or_checkpoint.is_file():
        return run_or_checkpoint
    if choice not in ("best", "last"):
        path = Path(choice)
        if not path.is_file():
            raise UserError(f"checkpoint {choice} does not exist; give best, last or a .ckpt file")
        return path
    folder = run_or_checkpoint / "checkpoints"
    found = sorted(
        folder.glob("best*.ckpt" if choice == "best" else "last*.ckpt"), key=lambda p: p.stat().st_mtime
    )
    if not found and choice == "best":  # a run without validation keeps only last.ckpt
        found = sorted(folder.glob("last*.ckpt"), key=lambda p: p.stat().st_mtime)
    if not found:
        present = ", ".join(p.name for p in folder.glob("*.ckpt")) or "none"
        raise UserError(f"{folder} holds no {choice} checkpoint (present: {present}); use --ckpt PATH")
    return found[-1]


def load_run(run_or_checkpoint: str | Path, ckpt: CheckpointChoice = "best") -> TrainedRun:
    """Rebuild a trained single-task run (Classifier or Regressor) and load its weights."""
    from tabrasa.cli import build_cli
    from tabrasa.tasks.task import TokenTask

    path = Path(run_or_checkpoint)
    if not path.exists():
        raise UserError(f"{path} does not exist; give a run folder (runs/NAME/version_N) or a .ckpt file")
    config = find_config(path)
    checkpoint = find_checkpoint(path, ckpt)
    # run=False: LightningCLI parses without a subcommand, so fit's own options (ckpt_path, weights_only)
    # are not options there; the sections that build the model and data are.
    settings = {k: v for k, v in (yaml.safe_load(config.read_text()) or {}).items() if k in BUILD_SECTIONS}
    cli = build_cli(
        [
            "--config",
            yaml.safe_dump(settings),
            "--trainer.logger",
            "false",
            "--trainer.enable_progress_bar",
            "false",
        ],
        run=False,
        trainer_defaults_override={"callbacks": []},
        save_config=False,
    )
    model = cli.model
    if not isinstance(model, TokenTask):
        raise UserError(
            f"{config} trains a {type(model).__name__}; prediction and export take single-task runs "
            f"(tabrasa.tasks.Classifier or Regressor)"
        )
    load_weights(model, checkpoint)
    kind = model.objective.kind
    names = list(class_names(cli.datamodule)) if kind == "classification" else None
    return TrainedRun(model.eval(), model.tokenizer, names, config, checkpoint, cli.datamodule)


def load_weights(model: nn.Module, checkpoint: Path) -> None:
    """Copy a training checkpoint's state dict into `model`; any missing or unexpected key is an error."""
    state = load_checkpoint(checkpoint).get("state_dict")
    if state is None:
        raise UserError(f"{checkpoint} holds no state_dict; it is not a tabrasa training checkpoint")
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise UserError(
            f"{checkpoint} does not match the model its config builds: missing {sorted(missing)[:8]}, "
            f"unexpected {sorted(unexpected)[:8]}; was config.yaml edited after training?"
        )
    # The weights are the fine-tuned ones: the base checkpoint named by `pretrained` is not read again.
    if hasattr(model, "_pretrained_loaded"):
        model._pretrained_loaded = True
    model.to(torch.device("cpu"))


def class_names(datamodule: Any) -> Sequence[str]:
    """The data module's class names. Where it keeps the base definition (the train split's ClassLabel),
    read them from the raw splits: `setup` would also tokenise every split to report truncation, minutes
    for IMDB, which prediction never needs."""
    from tabrasa.data.datamodule import TabrasaDataModule

    if type(datamodule).class_names is TabrasaDataModule.class_names:
        return datamodule.load_splits()["train"].features["label"].names
    return datamodule.class_names
