"""Checkpoints the sharded strategies write (tabrasa.training.sharding): read back, consolidated, rotated.

Under FSDP and FSDP2, Lightning writes either a folder of torch distributed-checkpoint (DCP) shards, one
file per rank plus `meta.pt` (loops, callbacks, hyper-parameters), or one full file with `torch.save`, and
reads both with `torch.load(weights_only=True)`. That refuses the numpy RNG state tabrasa's `ResumeState`
stores in every checkpoint, so a resume would fail; `rng_state_globals` allows exactly the numpy array
types that state needs, for the duration of one load, and nothing that can run code.

`read_training_checkpoint` reads any of them into one Lightning checkpoint dict on one process (no process
group), and `consolidate_checkpoint` writes that as a tabrasa safetensors checkpoint, which every loader
of the project (rebuild_run, tabrasa convert) reads.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from lightning_fabric.utilities.types import _PATH

from tabrasa.errors import UserError
from tabrasa.training.safetensors_io import load_checkpoint, save_checkpoint

METADATA_FILE = "meta.pt"  # Lightning's name for the non-tensor part of a sharded checkpoint
DCP_INDEX_FILE = ".metadata"  # torch distributed checkpoint's index of the shards


def _numpy_array_globals() -> list[Any]:
    """What unpickling a numpy array needs (torch's documented allowlist for numpy): the array and dtype
    types and the reconstructor; numpy 2 moved `numpy.core` to `numpy._core`."""
    core = getattr(np, "_core", None) or np.core
    return [core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]


@contextmanager
def rng_state_globals() -> Iterator[None]:
    """torch.load(weights_only=True) inside this block also reads numpy arrays (the RNG state of
    ResumeState); the allowlist is restored afterwards."""
    with torch.serialization.safe_globals(_numpy_array_globals()):
        yield


def is_sharded_checkpoint(path: str | Path) -> bool:
    return Path(path).is_dir() and (Path(path) / DCP_INDEX_FILE).is_file()


def read_training_checkpoint(path: str | Path) -> dict[str, Any]:
    """Any checkpoint a tabrasa run writes, as one Lightning checkpoint dict with full tensors on CPU: a
    sharded folder (its shards gathered), a full torch file, or a safetensors file."""
    path = Path(path)
    if path.is_dir():
        if not is_sharded_checkpoint(path):
            raise UserError(
                f"checkpoint folder {path} has no {DCP_INDEX_FILE}: it is not a sharded checkpoint; pass the "
                f"folder a sharded run wrote (e.g. checkpoints/last.ckpt) or a checkpoint file"
            )
        return _read_sharded(path)
    if not path.is_file():
        raise UserError(f"checkpoint {path} does not exist; pass a checkpoint file or folder a run wrote")
    with rng_state_globals():
        return load_checkpoint(path)


def _read_sharded(folder: Path) -> dict[str, Any]:
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    with tempfile.TemporaryDirectory() as scratch:
        # dcp_to_torch_save gathers every shard in this one process (no process group): torch's public
        # converter, at the cost of one temporary file the size of the weights and optimizer state.
        gathered = Path(scratch) / "gathered.pt"
        dcp_to_torch_save(folder, gathered)
        tensors = torch.load(gathered, map_location="cpu", weights_only=True)
    with rng_state_globals():
        checkpoint = torch.load(folder / METADATA_FILE, map_location="cpu", weights_only=True)
    checkpoint["state_dict"] = tensors.pop("state_dict")
    # Optimizer states, keyed by parameter name as FSDP2 saves them, in Lightning's list order.
    optimizers = sorted(
        (k for k in tensors if k.startswith("optimizer_")), key=lambda k: int(k.split("_")[1])
    )
    checkpoint["optimizer_states"] = [tensors[k] for k in optimizers]
    return checkpoint


def consolidate_checkpoint(source: str | Path, target: str | Path) -> Path:
    """Write the weights and training metadata of `source` (a sharded folder or full file) to `target` as
    one safetensors checkpoint. The optimizer state is left out: it is keyed by parameter name under
    sharding and by index under DDP, so resume a sharded run from its own folder."""
    checkpoint = read_training_checkpoint(source)
    checkpoint.pop("optimizer_states", None)
    checkpoint.pop("lr_schedulers", None)
    target = Path(target)
    save_checkpoint(checkpoint, target)
    return target


def remove_checkpoint_path(strategy: pl.strategies.Strategy, filepath: _PATH) -> None:
    """Remove a superseded checkpoint (ModelCheckpoint's top-k rotation) on rank 0, folder or file: a
    sharded checkpoint is a folder, which a file-only CheckpointIO cannot delete."""
    if not strategy.is_global_zero:
        return
    path = Path(filepath)
    if path.is_dir():
        shutil.rmtree(path)
    else:
        strategy.checkpoint_io.remove_checkpoint(path)
