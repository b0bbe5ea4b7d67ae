"""The run card `tabrasa fit` writes beside its checkpoints: what ran, on what, and what it scored.

Every number the README quotes from a training run is read from one of these files (copied under
`results/`), so a number always comes with its configuration, code version, data sizes, hardware and the
checkpoint it was measured on.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch

from tabrasa.io import atomic_write

PACKAGES = ("tabrasa", "torch", "pytorch-lightning", "torchmetrics", "datasets", "tokenizers", "timm")


def git_state(folder: Path) -> dict[str, Any]:
    """The commit and whether the working tree had uncommitted changes (None outside a git checkout)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=folder, capture_output=True,
            text=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:  # not on every platform
        return None


def hardware() -> dict[str, Any]:
    info: dict[str, Any] = {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    load = load_average()
    if load is not None:
        info["load_average_1min"] = load  # > cpus: the wall time shared the machine
    return info


@dataclass(frozen=True)
class EarlierSegments:
    """What the segments of a run before this process trained (FitClock reads it from the checkpoint the
    process resumed from)."""

    segments: int
    fit_seconds: float
    fit_cpu_seconds: float


NO_EARLIER_SEGMENTS = EarlierSegments(segments=0, fit_seconds=0.0, fit_cpu_seconds=0.0)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (user + system): beside the wall time it
    says how much of the machine the run had (wall ≈ CPU / threads on an idle machine)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def split_sizes(datamodule: Any) -> dict[str, Any]:
    """Examples per split (per task for a joint run)."""
    tasks = getattr(datamodule, "tasks", None)
    if isinstance(tasks, Mapping):
        return {name: split_sizes(module) for name, module in tasks.items()}
    source = getattr(datamodule, "source", None)
    if source is not None:  # an unlabelled view (InputsOf): its source's train and validation inputs
        return {split: n for split, n in split_sizes(source).items() if split != "test"}
    if callable(getattr(datamodule, "split_indices", None)):  # an unlabelled source
        return {split: len(datamodule.split_indices(split)) for split in ("train", "validation")}
    if isinstance(getattr(datamodule, "split_sizes", None), Mapping):  # a streaming corpus: its own count
        return dict(datamodule.split_sizes)
    splits = getattr(datamodule, "splits", None)
    return {split: len(rows) for split, rows in splits.items()} if splits is not None else {}


def split_fingerprints(datamodule: Any) -> dict[str, Any]:
    """Per split, the Hugging Face `datasets` fingerprint of its table: a hash of the cached source and
    of every transform applied to it, so two cards with equal fingerprints trained and tested on the same
    examples (per task for a joint run; None for a split held in another form)."""
    tasks = getattr(datamodule, "tasks", None)
    if isinstance(tasks, Mapping):
        return {name: split_fingerprints(module) for name, module in tasks.items()}
    source = getattr(datamodule, "source", None)
    if source is not None:
        return {split: f for split, f in split_fingerprints(source).items() if split != "test"}
    splits = getattr(datamodule, "splits", None)
    if not isinstance(splits, Mapping):
        return {}
    return {split: getattr(rows, "_fingerprint", None) for split, rows in splits.items()}


def split_records(datamodule: Any) -> Any:
    """How each split was made, where the data module says (`split_record`: e.g. the homology clustering's
    settings, MMseqs2 version and number of clusters); per task for a joint run, None where unknown."""
    tasks = getattr(datamodule, "tasks", None)
    if isinstance(tasks, Mapping):
        return {name: split_records(module) for name, module in tasks.items()}
    source = getattr(datamodule, "source", None)
    if source is not None:
        return split_records(source)
    return getattr(datamodule, "split_record", None)


def relative_to(path: str | None, folder: Path) -> str | None:
    """`path` relative to the run folder when it lies inside it (a checkpoint), else its file name."""
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(folder.resolve()))
    except ValueError:
        return Path(path).name


def relative_to_run(path: str | None, folder: Path) -> str | None:
    """A checkpoint resumed from, relative to this version's folder when it lies in the same logger run
    (`../version_0/checkpoints/last.ckpt`), else its file name: no machine's absolute path."""
    if path is None:
        return None
    try:
        inside = Path(path).resolve().relative_to(folder.resolve().parent)
    except ValueError:
        return Path(path).name
    return str(Path("..") / inside)


def write_run_card(
    folder: Path,
    trainer: pl.Trainer,
    datamodule: Any,
    *,
    fit_seconds: float,
    fit_cpu_seconds: float | None = None,
    load_at_start: float | None = None,
    git: dict[str, Any],
    tested_checkpoint: str | None,
    selection: tuple[str, float | None] | None,
    test_metrics: Mapping[str, float],
    earlier: EarlierSegments | None = None,
    resumed_from: str | None = None,
) -> Path:
    """fit_seconds, fit_cpu_seconds: this process's. A run resumed from a checkpoint (`resumed_from`) adds
    what its earlier segments trained (`earlier`, carried by FitClock), so the card's fit_seconds is the
    whole run's; `segments` says how it was split."""
    earlier = earlier or NO_EARLIER_SEGMENTS
    cpu_total = None if fit_cpu_seconds is None else fit_cpu_seconds + earlier.fit_cpu_seconds
    card = {
        "command": ["tabrasa", *sys.argv[1:]],
        # Paths relative to the run folder: a committed card names no machine's absolute paths.
        "config": "config.yaml" if (folder / "config.yaml").exists() else None,
        "git": git,  # read when fit started: the code that trained, not the tree at the end
        "versions": versions(),
        "hardware": {**hardware(), "load_average_1min_at_start": load_at_start},
        "data": {
            "class": type(datamodule).__name__,
            "split_sizes": split_sizes(datamodule),
            "fingerprints": split_fingerprints(datamodule),
            "split": split_records(datamodule),
        },
        "fit_seconds": round(fit_seconds + earlier.fit_seconds, 1),
        "fit_cpu_seconds": None if cpu_total is None else round(cpu_total, 1),
        "segments": {
            "count": earlier.segments + 1,
            "this_process_fit_seconds": round(fit_seconds, 1),
            "resumed_from": relative_to_run(resumed_from, folder),
        },
        "global_step": trainer.global_step,
        "epochs": trainer.current_epoch,
        "tested_checkpoint": relative_to(tested_checkpoint, folder),
        "selected_on": {"metric": selection[0], "value": selection[1]} if selection else None,
        "test": {k: round(float(v), 6) for k, v in sorted(test_metrics.items())},
    }
    path = folder / "run_card.json"
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(card, indent=2) + "\n"))
    return path
