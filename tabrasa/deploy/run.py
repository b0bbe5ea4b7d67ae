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

from torch import nn

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.errors import UserError
from tabrasa.tasks.task import TokenTask
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.training.rebuild import rebuild_run
from tabrasa.training.run_folder import CheckpointChoice, locate_run


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


def load_run(run_or_checkpoint: str | Path, ckpt: CheckpointChoice = "best") -> TrainedRun:
    """Rebuild a trained single-task run (Classifier or Regressor) and load its weights."""
    config, checkpoint = locate_run(run_or_checkpoint, ckpt)
    rebuilt = rebuild_run(config, checkpoint)
    model = rebuilt.model
    if not isinstance(model, TokenTask):
        raise UserError(
            f"{config} trains a {type(model).__name__}; prediction and export take single-task runs "
            f"(tabrasa.tasks.Classifier or Regressor)"
        )
    kind = model.objective.kind
    names = list(class_names(rebuilt.datamodule)) if kind == "classification" else None
    return TrainedRun(model.eval(), model.tokenizer, names, config, checkpoint, rebuilt.datamodule)


def class_names(datamodule: Any) -> Sequence[str]:
    """The data module's class names. Where it keeps the base definition (the train split's ClassLabel),
    read them from the raw splits: `setup` would also tokenise every split to report truncation, minutes
    for IMDB, which prediction never needs."""
    if type(datamodule).class_names is TabrasaDataModule.class_names:
        return datamodule.load_splits()["train"].features["label"].names
    return datamodule.class_names
