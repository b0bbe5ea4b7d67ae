"""The suite's shared fixtures for the harness's tests (the project cache one reads datasets from)."""

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import cache_dir

__all__ = ["cache_dir"]


@pytest.fixture(autouse=True)
def temporary_folder_under_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The harness keeps scratch state in the system's temporary folder (the curves' run claims): in a test
    that folder is the test's own, so the suite leaves nothing behind in /tmp."""
    folder = tmp_path / "system-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
