"""Callbacks the robustness tests add to CLI runs (`--trainer.callbacks+=...`), importable from the root."""

from __future__ import annotations

import time
from pathlib import Path

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback
from safetensors.torch import save_file


class PauseAtStep(Callback):
    """Writes `marker` and sleeps when training reaches `step`, so a test can SIGKILL the run right there
    (after the checkpoint of the previous step was written, before the next batch)."""

    def __init__(self, step: int, marker: str, seconds: float = 120.0) -> None:
        self.step = step
        self.marker = Path(marker)
        self.seconds = seconds

    def on_train_batch_start(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: object, batch_idx: int
    ) -> None:
        if trainer.global_step == self.step:
            self.marker.write_text(f"{trainer.global_step} {batch_idx}")
            time.sleep(self.seconds)


class SaveRankWeights(Callback):
    """Each rank writes its own copy of the weights at the end of training: `rank{r}.safetensors`."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().cpu().clone().contiguous() for k, v in pl_module.state_dict().items()}
        save_file(state, str(self.folder / f"rank{trainer.global_rank}.safetensors"))
