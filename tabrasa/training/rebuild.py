"""A trained run rebuilt from its config and checkpoint, exactly as `tabrasa fit` built it.

The one place a run comes back to life: prediction, export, inspection, conversion to a checkpoint
folder and distillation teachers all call `rebuild_run`, so they parse, link and load alike. Every weight
must load: a missing or unexpected key is an error naming the keys, never a silent random init.
"""

from __future__ import annotations

import importlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
import yaml

from tabrasa.errors import UserError
from tabrasa.tokenizers.vocabulary_record import restore_vocabularies
from tabrasa.training.lightning_cli import build_cli
from tabrasa.training.safetensors_io import CorruptCheckpointError, load_checkpoint

# What builds the model and data; a saved run config also carries keys only a running `fit` takes.
BUILD_SECTIONS = ("seed_everything", "trainer", "model", "data", "checkpoint")


@dataclass
class RebuiltRun:
    """model on CPU (its weights loaded when a checkpoint was given), its data module, and their sources."""

    model: pl.LightningModule
    datamodule: Any
    config: Path
    checkpoint: Path | None


def rebuild_run(config: str | Path, ckpt: str | Path | None = None) -> RebuiltRun:
    """Build the model and data module of `config`; with `ckpt`, load its state dict strictly."""
    config = Path(config)
    if not config.is_file():
        raise UserError(f"config {config} does not exist; pass the YAML the run was trained with")
    settings = yaml.safe_load(config.read_text()) or {}
    if not isinstance(settings, dict):
        raise UserError(f"config {config} is not a YAML mapping; pass the config.yaml `tabrasa fit` saved")
    check_retired_settings(settings.get("data"), str(config))
    quiet = ["--trainer.logger", "false", "--trainer.enable_progress_bar", "false"]
    with tempfile.TemporaryDirectory() as folder:
        # Saved configs are fully resolved, so a copy without the run-only keys may live anywhere; a
        # hand-written one keeps its folder (relative includes such as ../backbone/small.yaml).
        source = config
        if set(settings) - set(BUILD_SECTIONS):
            source = Path(folder) / config.name
            source.write_text(yaml.safe_dump({k: v for k, v in settings.items() if k in BUILD_SECTIONS}))
        # run=False: LightningCLI parses without a subcommand, so fit's own options are not options there.
        cli = build_cli(
            ["--config", str(source), *quiet],
            run=False,
            trainer_defaults_override={"callbacks": []},
            save_config=False,
        )
    model = cli.model
    checkpoint = Path(ckpt) if ckpt is not None else None
    if checkpoint is not None:
        load_weights(model, checkpoint, config)
    return RebuiltRun(model, cli.datamodule, config, checkpoint)


def check_retired_settings(section: Any, where: str) -> None:
    """A config section (`class_path`, `init_args`) checked by the class it names, where that class has a
    `retired_settings(init_args, where)` hook: settings an older tabrasa wrote that the class takes no more
    (a saved run's) are refused with the fix, instead of a parse error. Anything else is the parser's."""
    if not isinstance(section, dict) or not isinstance(section.get("class_path"), str):
        return
    module, _, name = section["class_path"].rpartition(".")
    try:
        check = getattr(getattr(importlib.import_module(module), name), "retired_settings", None)
    except (ImportError, AttributeError, ValueError):
        return  # the parser names a class it cannot find
    if callable(check):
        check(section.get("init_args") or {}, where)


def load_weights(model: torch.nn.Module, checkpoint: Path, config: Path) -> None:
    """Copy a training checkpoint's state dict into `model`; any missing or unexpected key is an error."""
    if not checkpoint.exists():
        raise UserError(f"checkpoint {checkpoint} does not exist; pass a .ckpt file `tabrasa fit` wrote")
    try:
        saved = load_checkpoint(checkpoint)
    except CorruptCheckpointError as error:
        raise UserError(
            f"checkpoint {checkpoint} cannot be read ({error}); pass another checkpoint"
        ) from error
    state = saved.get("state_dict")
    # The vocabularies the weights were trained with, where the checkpoint keeps them (vocabulary_record.py).
    try:
        restore_vocabularies(model, saved, str(checkpoint))
    except ValueError as error:
        raise UserError(str(error)) from error
    if state is None:
        raise UserError(f"{checkpoint} holds no state_dict; pass a checkpoint written by `tabrasa fit`")
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise UserError(
            f"{checkpoint} does not match the model {config} builds: missing {sorted(missing)[:8]}, "
            f"unexpected {sorted(unexpected)[:8]}; pass the config the run was trained with"
        )
    # The weights are the trained ones: a base checkpoint named by `pretrained` is not read again.
    if hasattr(model, "_pretrained_loaded"):
        model._pretrained_loaded = True
    model.to(torch.device("cpu"))
