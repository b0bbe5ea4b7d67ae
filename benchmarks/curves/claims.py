"""Which runs another process of the sweep is training now, so that two processes can share one arm.

A claim is a file named after the run, created with O_EXCL (only one process can make it) and holding its
owner's pid. A claim whose owner is gone (a killed sweep) is stale and is taken over. The folder is under
the system's temporary directory, keyed by the log's absolute path: processes on one machine that write
the same log see the same claims, and nothing lands in the checkout. `made_once` uses the same claims for
what several runs share (a fraction's pretraining export or teacher), so it is made by one process.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
WAIT_SECONDS = 30.0  # how long a process waits before it looks again at what another one holds


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def folder_of_log(kind: str, log_path: Path) -> Path:
    """A folder in the system's temporary directory that every process writing `log_path` shares, for
    state that means nothing after a reboot: its claims (`kind`). Checkpoints live in the cache instead
    (`early_stopped_run.runs_folder_of_log`)."""
    return Path(tempfile.gettempdir()) / f"tabrasa-curve-{kind}-{log_digest(log_path)}"


def log_digest(log_path: Path) -> str:
    """A short name for the log's absolute path: what every folder a sweep shares by its log is keyed by."""
    return hashlib.sha1(str(log_path.resolve()).encode()).hexdigest()[:12]


class Claims:
    def __init__(self, log_path: Path, folder: Path | None = None) -> None:
        self.folder = folder or folder_of_log("claims", log_path)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        return self.folder / (hashlib.sha1(name.encode()).hexdigest()[:16] + ".claim")

    def owner(self, name: str) -> int | None:
        """The pid of the live process holding `name`, or None (free, or its owner has died)."""
        try:
            pid = int(self._path(name).read_text() or "0")
        except (FileNotFoundError, ValueError):
            return None
        return pid if pid and _alive(pid) else None

    def take(self, name: str) -> bool:
        """True when this process now holds `name`; False while a live process holds it."""
        path = self._path(name)
        for _ in range(2):  # a second try after clearing a dead owner's claim
            try:
                handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if self.owner(name) is not None:
                    return False
                path.unlink(missing_ok=True)
                continue
            with os.fdopen(handle, "w") as claim:
                claim.write(str(os.getpid()))
            return True
        return False

    def release(self, name: str) -> None:
        self._path(name).unlink(missing_ok=True)


def made_once(
    claims: Claims, name: str, make: Callable[[], T], wait: Callable[[float], None] = time.sleep
) -> T:
    """`make()` while holding `name`: a second process that needs the same shared input (a fraction's
    pretraining export, its teacher) waits for the first instead of making it beside it into the same
    folder. `make` must look for a finished result before making one, so the waiter then reads it."""
    while not claims.take(name):
        wait(WAIT_SECONDS)
    try:
        return make()
    finally:
        claims.release(name)
