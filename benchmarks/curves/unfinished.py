"""The runs stopped in the middle or under way, read from their folders (`early_stopped_run.run_folder`):
what `bench_curves --unfinished` prints, so a sweep spread over several loans of a machine shows how far
each of its long runs has come and whether a live process is training it now."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.curves.claims import Claims
from benchmarks.curves.early_stopped_run import KEY_FILE, RunKey
from benchmarks.evidence.rate_sweep import RunLog
from tabrasa.training.safetensors_io import load_checkpoint


@dataclass(frozen=True)
class Unfinished:
    key: RunKey
    epoch: int  # the epoch its last checkpoint was written in (0-based; at its end or in its middle)
    steps: int  # optimizer steps its last checkpoint holds
    segments: int  # processes that trained it up to that checkpoint
    fit_seconds: float
    trainer: int | None  # pid of the live process training it now, None while it waits for a sweep

    def line(self) -> str:
        k = self.key
        shuffled = " permuted" if k.permuted else ""
        now = f"training now (pid {self.trainer})" if self.trainer else "stopped; the sweep resumes it"
        return (
            f"{k.modality} {k.arm} f={k.fraction:g} lr={k.lr:g} seed={k.seed}{shuffled}: "
            f"at epoch {self.epoch}, step {self.steps}, {self.fit_seconds / 3600:.2f} h over {self.segments} "
            f"{'process' if self.segments == 1 else 'processes'}; {now}"
        )


def unfinished_runs(runs_folder: Path, log: RunLog, claims: Claims) -> list[Unfinished]:
    """Every run in `runs_folder` with a checkpoint to resume from and no line in `log` yet."""
    found = []
    for key_file in sorted(runs_folder.glob(f"*/{KEY_FILE}")):
        last = key_file.parent / "last.ckpt"
        key = RunKey(**json.loads(key_file.read_text()))
        if not last.is_file() or log.get(key) is not None:
            continue
        checkpoint = load_checkpoint(last)
        clock = checkpoint.get("callbacks", {}).get("FitClock", {})
        found.append(
            Unfinished(
                key=key,
                epoch=int(checkpoint["epoch"]),
                steps=int(checkpoint["global_step"]),
                segments=int(clock.get("segments", 1)),
                fit_seconds=float(clock.get("fit_seconds", 0.0)),
                trainer=claims.owner(log.name(key)),
            )
        )
    return found
