"""Per-rank peak device memory and step time of a training run, for comparing strategies (DDP, FSDP, FSDP2).

`PeakMemory` is a callback: each rank writes `rank{r}.json` into a folder when training ends, holding
`torch.cuda.max_memory_allocated` (what tensors occupied at the peak: weights, gradients, optimizer state,
activations) and `max_memory_reserved` (what the caching allocator held) since training started, and the
mean wall time of the steps after a warm-up. On CPU the memory fields are None; the timing still counts.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import Callback


class PeakMemory(Callback):
    """folder: where each rank writes rank{r}.json. warmup_steps: optimizer steps left out of the timing
    (allocator growth, autotuning, the first all-gathers)."""

    def __init__(self, folder: str, warmup_steps: int = 10) -> None:
        self.folder = Path(folder)
        self.warmup_steps = warmup_steps
        self._timed_from: tuple[int, float] | None = None

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if _cuda(pl_module):
            torch.cuda.synchronize(pl_module.device)
            torch.cuda.reset_peak_memory_stats(pl_module.device)
        self._timed_from = None

    def on_train_batch_end(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        if self._timed_from is None and trainer.global_step >= self.warmup_steps:
            if _cuda(pl_module):
                torch.cuda.synchronize(pl_module.device)
            self._timed_from = (trainer.global_step, time.perf_counter())

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        cuda = _cuda(pl_module)
        if cuda:
            torch.cuda.synchronize(pl_module.device)
        seconds_per_step = None
        if self._timed_from is not None and trainer.global_step > self._timed_from[0]:
            step, started = self._timed_from
            seconds_per_step = (time.perf_counter() - started) / (trainer.global_step - step)
        report = {
            "rank": trainer.global_rank,
            "world_size": trainer.world_size,
            "strategy": type(trainer.strategy).__name__,
            "precision": str(trainer.precision),
            "device": torch.cuda.get_device_name(pl_module.device) if cuda else str(pl_module.device),
            "steps": trainer.global_step,
            "timed_steps": trainer.global_step - self._timed_from[0] if self._timed_from else 0,
            "seconds_per_step": seconds_per_step,
            "peak_allocated_bytes": torch.cuda.max_memory_allocated(pl_module.device) if cuda else None,
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(pl_module.device) if cuda else None,
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"rank{trainer.global_rank}.json").write_text(json.dumps(report, indent=1))


def _cuda(module: pl.LightningModule) -> bool:
    return module.device.type == "cuda"
