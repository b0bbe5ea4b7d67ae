"""Shared fixtures: a fixed seed, an isolated data cache, no network; the TABRASA_REQUIRE_ALL switch (see
tests/availability.py) and the suite's wall time at the end."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from pytorch_lightning.utilities.rank_zero import rank_zero_only

from tests.availability import pytest_runtest_makereport  # noqa: F401  (the hook behind TABRASA_REQUIRE_ALL)

# Hypothesis keeps its storage (example database, caches) in a temporary folder, not in the checkout: the
# suite writes only outside the repository. The process that makes the folder removes it when it exits
# (xdist's workers inherit the variable, so they share the controller's folder and leave it to it).
if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:
    _HYPOTHESIS_FOLDER = tempfile.mkdtemp(prefix="tabrasa-hypothesis-")
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _HYPOTHESIS_FOLDER
    atexit.register(shutil.rmtree, _HYPOTHESIS_FOLDER, ignore_errors=True)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Under pytest-xdist (`-n 2`, the README's test command) every worker is its own process; torch's default of
# one thread per core would put workers × cores threads on the cores and slow every one of them.
# The cores this process may use, not the machine's: a container can see many more than it is given.
_CORES = len(os.sched_getaffinity(0))
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    torch.set_num_threads(max(1, _CORES // _WORKERS))


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _rank_zero_stays_zero() -> Iterator[None]:
    """A Trainer built in-process under a cluster's variables sets Lightning's process-wide rank (SLURM task 3
    makes it 3), after which every later Trainer in the worker skips its rank-zero work, logging included."""
    rank = rank_zero_only.rank
    yield
    rank_zero_only.rank = rank


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data cache for the whole session, so tokenised IMDB slices are built once."""
    path = tmp_path_factory.mktemp("tabrasa-cache")
    os.environ["TABRASA_CACHE"] = str(path)
    return path


ROOT = Path(__file__).resolve().parents[1]
# What a run writes relative to its working directory when a test forgets to point it at tmp_path.
RUN_OUTPUTS = ("runs", "lightning_logs", "export", "checkpoints")


@pytest.fixture(scope="session", autouse=True)
def _checkout_stays_clean() -> Iterator[None]:
    """Tests write only under tmp_path: a run folder that appears in the checkout fails the session."""
    before = {name for name in RUN_OUTPUTS if (ROOT / name).exists()}
    yield
    new = sorted({name for name in RUN_OUTPUTS if (ROOT / name).exists()} - before)
    assert not new, f"the suite wrote {new} into the checkout; point the run at tmp_path"


_STARTED = time.monotonic()


def pytest_sessionstart(session: pytest.Session) -> None:
    global _STARTED
    _STARTED = time.monotonic()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The suite's wall time, collection included, as the last summary line: the cost every change adds to."""
    terminalreporter.write_sep("-", f"suite wall time {time.monotonic() - _STARTED:.1f} s")
