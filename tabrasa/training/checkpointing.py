"""What a run writes so that a killed run can resume exactly: frequent `last` checkpoints and RNG states.

`ResumeCheckpoint` writes `last.ckpt` every N training steps or every M minutes (mid-epoch) and at the end
of every epoch; it is the only writer of `last.ckpt`. `ResumeState` stores the RNG states in every
checkpoint and, when a resumed run starts training, puts them back together with the train loader's
position, so the resumed run draws the same batches and random numbers as an uninterrupted one.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import Callback, ModelCheckpoint


class ResumeCheckpoint(ModelCheckpoint):
    """`last.ckpt`, refreshed mid-epoch and at every epoch's end, for `--ckpt_path last`.

    When this run's own folder has none yet (a resumed run logs into a new `version_N`), `last` is the
    newest `last*.ckpt` of the earlier versions of the same logger run.

    Args:
        every_n_train_steps: refresh every this many optimizer steps; takes precedence over every_minutes.
        every_minutes: refresh every this many minutes of training. None for both: at epoch ends only.
        dirpath: folder for last.ckpt; default the logger's version folder / checkpoints.
    """

    def __init__(
        self,
        every_n_train_steps: int | None = None,
        every_minutes: float | None = 10.0,
        dirpath: str | None = None,
    ) -> None:
        if every_n_train_steps is not None and every_n_train_steps < 1:
            raise ValueError(f"checkpoint every_n_train_steps={every_n_train_steps} must be >= 1 or None")
        if every_minutes is not None and every_minutes <= 0:
            raise ValueError(f"checkpoint every_minutes={every_minutes} must be > 0 or None")
        interval = None
        if every_n_train_steps is None and every_minutes is not None:
            interval = timedelta(minutes=every_minutes)
        super().__init__(
            dirpath=dirpath,
            save_top_k=0,
            save_last=True,
            every_n_train_steps=every_n_train_steps or (None if interval else 0),
            train_time_interval=interval,
            enable_version_counter=False,
        )

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        # After the epoch's validation: an epoch boundary is always a resume point.
        if not self._should_skip_saving_checkpoint(trainer):
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        pass  # saving happens on train batch and train epoch ends only

    def _find_last_checkpoints(self, trainer: pl.Trainer) -> set[str]:
        found = super()._find_last_checkpoints(trainer)
        if found or self.dirpath is not None or not trainer.loggers:
            return found
        logger = trainer.loggers[0]
        run = Path(logger.save_dir or trainer.default_root_dir) / str(logger.name)
        return {str(p) for p in run.glob(f"*/checkpoints/{self.CHECKPOINT_NAME_LAST}*{self.FILE_EXTENSION}")}


class ResumeState(Callback):
    """Puts back, when a resumed run starts training, what Lightning's own restore does not:

    - the torch (CPU, and this rank's CUDA device), numpy and Python RNG states, saved in every
      checkpoint, so dropout masks and augmentations after a resume are those the uninterrupted run drew;
    - the train loaders' positions (`ResumableLoader` state, saved by Lightning with the fit loop). Lightning
      applies them only when it builds the train loader after the restore, but `estimated_stepping_batches`
      (the LR schedule's length) builds it before, so they would be dropped.

    Both happen at `on_train_start`: after the sanity check and the loader set-up, before the first batch,
    so nothing draws from the RNGs in between. Under DDP every rank gets rank 0's RNG states: Lightning
    seeds every rank alike, so their states are equal anyway.
    """

    def __init__(self) -> None:
        self._pending: dict[str, Any] | None = None

    def state_dict(self) -> dict[str, Any]:
        name, keys, position, has_gauss, gauss = np.random.get_state()
        state: dict[str, Any] = {
            "torch": torch.get_rng_state(),
            "numpy": {
                "name": name,
                "keys": keys,
                "position": position,
                "has_gauss": has_gauss,
                "gauss": gauss,
            },
            "python": random.getstate(),
        }
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            state["cuda"] = torch.cuda.get_rng_state()  # this rank's device only
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._pending = state_dict

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        _restore_loader_positions(trainer)
        state, self._pending = self._pending, None
        if state is not None:
            _restore_random_state(state)


def _restore_loader_positions(trainer: pl.Trainer) -> None:
    """Apply the loader states Lightning restored but did not apply. Early enough: ResumableLoader.__iter__
    is a generator, so no index is drawn from its sampler (workers or not) before the first batch."""
    fit_loop = trainer.fit_loop
    if fit_loop._combined_loader_states_to_load and fit_loop._combined_loader is not None:
        fit_loop._load_combined_loader_states()


def _restore_random_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    numpy = state["numpy"]
    np.random.set_state((numpy["name"], numpy["keys"], numpy["position"], numpy["has_gauss"], numpy["gauss"]))
    random.setstate(_as_tuples(state["python"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])


def _as_tuples(value: Any) -> Any:
    """random.setstate wants tuples all the way down; a JSON round trip may have made lists."""
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list | tuple) else value
