"""Lightning checkpoints as safetensors files, written atomically and read without pickle.

`SafetensorsCheckpointIO` is a Lightning `CheckpointIO` plugin: every checkpoint the Trainer writes (last,
best, mid-epoch) is one safetensors file (see `checkpoint_format`), keeping the `.ckpt` suffix so Lightning's
`--ckpt_path last` and ModelCheckpoint's file handling work unchanged.

Writes are atomic: the file is written beside its target under a hidden temporary name, flushed to disk
(fsync) and renamed over the target (os.replace, atomic on POSIX and Windows). A run killed at any moment
leaves either the previous checkpoint or the new one, never half a file. A file that is truncated or corrupt
anyway (a copy cut short, a full disk elsewhere) is refused with an error naming it and the other
checkpoints beside it, which stay usable.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from lightning_fabric.plugins import CheckpointIO
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from tabrasa.training.checkpoint_format import (
    FORMAT_KEY,
    FORMAT_NAME,
    SKELETON_KEY,
    VERSION,
    VERSION_KEY,
    decode_skeleton,
    encode_checkpoint,
)

ZIP_MAGIC = b"PK\x03\x04"  # torch.save's format: a zip archive holding a pickle


class CorruptCheckpointError(ValueError):
    """A checkpoint file that cannot be read: truncated, corrupt, or not a checkpoint at all."""


def save_checkpoint(checkpoint: dict[str, Any], path: str | Path) -> None:
    """Write `checkpoint` to `path` as safetensors, atomically."""
    tensors, metadata = encode_checkpoint(checkpoint)
    atomic_write(Path(path), lambda tmp: save_file(tensors, str(tmp), metadata=metadata))


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint written by `save_checkpoint` (or a torch.save file, with weights_only=True)."""
    path = _existing_file(path)
    if _is_torch_zip(path):
        return _load_torch_file(path)
    with _open(path) as (handle, skeleton):
        return decode_skeleton(skeleton, handle.get_tensor)


def load_hyper_parameters(path: str | Path) -> dict[str, Any]:
    """Only the `hyper_parameters` entry, reading no weights (for the CLI to rebuild the model's config)."""
    path = _existing_file(path)
    if _is_torch_zip(path):
        return _load_torch_file(path).get("hyper_parameters", {})
    with _open(path) as (handle, skeleton):
        return decode_skeleton(skeleton.get("hyper_parameters", {}), handle.get_tensor)


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Run `write(tmp)` for a temporary file beside `path`, make it durable, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # One fixed temporary name per target: a write killed by SIGKILL leaves one stale file that the next
    # write to the same target replaces, not a growing pile. Hidden, and not `*.ckpt`, so no glob finds it.
    tmp = path.with_name(f".{path.name}.partial")
    try:
        write(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


class SafetensorsCheckpointIO(CheckpointIO):
    """Lightning CheckpointIO plugin: safetensors on disk, atomic writes, no pickle on load.

    Use it with `Trainer(plugins=[SafetensorsCheckpointIO()])`; the tabrasa CLI installs it by default.
    """

    def save_checkpoint(
        self, checkpoint: dict[str, Any], path: Any, storage_options: Any | None = None
    ) -> None:
        if storage_options is not None:
            raise TypeError("SafetensorsCheckpointIO takes no storage_options; it writes local files")
        save_checkpoint(checkpoint, _local_path(path))

    def load_checkpoint(
        self, path: Any, map_location: Any | None = None, weights_only: bool | None = None
    ) -> dict[str, Any]:
        # Tensors are read to CPU; Lightning copies weights and optimizer states onto the model's device.
        # weights_only is ignored: nothing is ever unpickled except by torch.load(weights_only=True).
        return load_checkpoint(_local_path(path))

    def remove_checkpoint(self, path: Any) -> None:
        Path(_local_path(path)).unlink(missing_ok=True)


@contextmanager
def _open(path: Path) -> Iterator[tuple[Any, Any]]:
    """The open safetensors file and its JSON skeleton; read errors become CorruptCheckpointError."""
    try:
        with safe_open(str(path), framework="pt", device="cpu") as handle:
            metadata = handle.metadata() or {}
            if metadata.get(FORMAT_KEY) != FORMAT_NAME or SKELETON_KEY not in metadata:
                raise CorruptCheckpointError(
                    f"{path} is a safetensors file but not a tabrasa training checkpoint (no {FORMAT_KEY} "
                    f"header); load plain weights with safetensors.torch.load_file or tabrasa.pretrained"
                )
            if metadata.get(VERSION_KEY) != VERSION:
                raise CorruptCheckpointError(
                    f"{path} has checkpoint format version {metadata.get(VERSION_KEY)}, this tabrasa reads "
                    f"version {VERSION}; use the tabrasa release that wrote it"
                )
            yield handle, json.loads(metadata[SKELETON_KEY])
    except (SafetensorError, json.JSONDecodeError, OSError) as err:
        raise CorruptCheckpointError(_corrupt_message(path, err)) from err


def _corrupt_message(path: Path, err: Exception) -> str:
    others = sorted(
        (p for p in path.parent.glob("*.ckpt") if p != path), key=lambda p: p.stat().st_mtime, reverse=True
    )
    listing = ", ".join(str(p) for p in others[:5]) or "none"
    return (
        f"checkpoint {path} is truncated or corrupt and cannot be loaded ({err}). It was not written by a "
        f"completed save (tabrasa writes checkpoints atomically), e.g. a copy was cut short. Other "
        f"checkpoints in {path.parent}, newest first: {listing}; resume from one with --ckpt_path PATH"
    )


def _existing_file(path: str | Path) -> Path:
    path = Path(_local_path(path))
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    return path


def _local_path(path: Any) -> str:
    text = os.fspath(path)
    if "://" in text and not text.startswith("file://"):
        raise ValueError(
            f"checkpoint path {text} is remote; tabrasa writes checkpoints to local disk (atomically): "
            f"save them locally and sync the folder"
        )
    return text.removeprefix("file://")


def _is_torch_zip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) == ZIP_MAGIC


def _load_torch_file(path: Path) -> dict[str, Any]:
    """Checkpoints from before the safetensors format: torch.load, refusing anything but plain data."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        raise CorruptCheckpointError(
            f"{path} is a torch.save file that torch.load(weights_only=True) refuses ({err}); tabrasa "
            f"never unpickles arbitrary objects. Only if you trust its author, convert it once yourself "
            f"(torch.load with weights_only off, then tabrasa.training.save_checkpoint)"
        ) from err


def _fsync_directory(folder: Path) -> None:
    """Make the rename itself durable (POSIX); Windows cannot open a folder for fsync."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
