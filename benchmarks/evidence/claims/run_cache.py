"""Finished claim runs kept on disk, so a long claim killed part-way resumes run by run.

A claim trains every (arm, rate, seed) from scratch; long_range_mixers' Mamba arm alone is about an hour
on this CPU. `bench_claims --run-cache DIR` keeps each finished run's History in DIR, under a name that
digests everything that makes two runs the same run (claim, arm, the claim's settings, device, torch
version, rate, seed), and a rerun reads it back instead of training. Without the flag nothing is kept.
Histories are pickled (torch.save), so only a folder this user writes should be passed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from benchmarks.evidence.synthetic_training import History

_folder: Path | None = None  # set once per process by the runner, from --run-cache


def use_folder(folder: Path | None) -> None:
    """Keep finished runs in `folder` from now on (None: keep nothing)."""
    global _folder
    _folder = folder


@dataclass(frozen=True)
class RunCache:
    """One arm's finished runs: `identity` digests the claim, the arm and everything they were trained by."""

    folder: Path
    identity: str

    @classmethod
    def for_arm(cls, claim: str, arm: str, settings: Any, device: torch.device) -> RunCache | None:
        """The arm's cache in the runner's folder, or None when no folder was given."""
        if _folder is None:
            return None
        described = {
            "claim": claim,
            "arm": arm,
            "settings": dataclasses.asdict(settings),
            "device": device.type,
            "torch": torch.__version__,
        }
        digest = hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()
        return cls(_folder, f"{claim}-{arm}-{digest[:16]}")

    def path(self, lr: float, seed: int) -> Path:
        return self.folder / f"{self.identity}-lr{lr:g}-seed{seed}.pt"

    def get(self, lr: float, seed: int) -> History | None:
        path = self.path(lr, seed)
        return torch.load(path, weights_only=False) if path.exists() else None

    def put(self, lr: float, seed: int, history: History) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.path(lr, seed).with_suffix(".partial")
        torch.save(history, partial)
        partial.replace(self.path(lr, seed))  # whole or absent: a kill mid-write leaves no half file
