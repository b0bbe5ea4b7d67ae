"""How long a run has trained across every process that trained it.

A run killed and resumed with `--ckpt_path last` trains in segments, one process each. Each process only
sees its own wall clock, so without this its run card would report the last segment's seconds as the run's
cost. `FitClock` carries the seconds trained so far in every checkpoint (Lightning saves and restores a
callback's `state_dict`), so the resumed process adds its own to those of the segments before it. Time
spent after the checkpoint a run resumed from is lost with that process and is not counted.

One clock for the run card and the checkpoints: `tabrasa fit` starts it before `Trainer.fit` (data setup
included, as a user waits for it), so each segment's seconds mean the same whether the card or a later
segment reads them. Outside the CLI it starts at `on_fit_start`.
"""

from __future__ import annotations

import time
from typing import Any

import pytorch_lightning as pl

from tabrasa.training.run_card import NO_EARLIER_SEGMENTS, EarlierSegments, cpu_seconds


class FitClock(pl.Callback):
    def __init__(self) -> None:
        self.earlier = NO_EARLIER_SEGMENTS
        self._started: tuple[float, float] | None = None

    def start(self) -> None:
        self._started = (time.perf_counter(), cpu_seconds())

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self._started is None:  # the CLI started it earlier, before data setup
            self.start()

    def this_process(self) -> tuple[float, float]:
        """Wall and CPU seconds since this process started the clock."""
        if self._started is None:
            return 0.0, 0.0
        wall, cpu = self._started
        return time.perf_counter() - wall, cpu_seconds() - cpu

    def state_dict(self) -> dict[str, Any]:
        wall, cpu = self.this_process()
        return {
            "segments": self.earlier.segments + 1,
            "fit_seconds": self.earlier.fit_seconds + wall,
            "fit_cpu_seconds": self.earlier.fit_cpu_seconds + cpu,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.earlier = EarlierSegments(
            segments=int(state_dict["segments"]),
            fit_seconds=float(state_dict["fit_seconds"]),
            fit_cpu_seconds=float(state_dict["fit_cpu_seconds"]),
        )


def fit_clock(trainer: pl.Trainer) -> FitClock | None:
    return next((c for c in trainer.callbacks if isinstance(c, FitClock)), None)  # type: ignore[attr-defined]
