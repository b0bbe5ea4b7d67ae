"""One way to write a file or a folder so that a killed run never leaves half of it where readers look."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Run `write(tmp)` for a temporary sibling of `path` (a file or a folder), then rename it over `path`.

    Readers see the old entry or the whole new one, never a partial one: a rename within one folder is
    atomic on POSIX and Windows. Files are fsynced first, so a power cut cannot publish an empty file.
    A folder another process published first is kept (both built the same entry) and ours is dropped.
    The temporary name carries the process id, so concurrent writers (DDP ranks) never share one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    _remove(tmp)
    try:
        write(tmp)
        if tmp.is_file():
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
        try:
            os.replace(tmp, path)
        except OSError:
            if not (tmp.is_dir() and path.is_dir()):
                raise
    finally:
        _remove(tmp)
    _fsync_folder(path.parent)
    return path


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; not possible on every platform (Windows), so best effort."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
