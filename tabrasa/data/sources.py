"""Where a dataset's raw files live, and the one error every data module raises when they are absent."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class DataSourceMissingError(FileNotFoundError):
    """A dataset's raw files are not on this machine; the message names the package that installs them."""


def first_existing(candidates: Sequence[Path], what: str, install: str) -> Path:
    """The first of `candidates` that exists, else DataSourceMissingError listing them and `install`."""
    for path in candidates:
        if path.exists():
            return path
    looked = "\n".join(f"  {p}" for p in candidates)
    raise DataSourceMissingError(f"{what} was not found. Looked in:\n{looked}\nTo install it: {install}")
