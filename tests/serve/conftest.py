"""Fixtures of the serving tests: tiny served models built in memory (fast tests), tiny trained runs and
servers in subprocesses (slow tests), and `require`, which skips a test whose tool is missing, or fails
it when TABRASA_REQUIRE_ALL=1 (CI, where every tool is installed and a skip would hide a gap)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabrasa.deploy.run import TrainedRun
from tabrasa.serve.model import ServedModel, served_model
from tests.deploy.conftest import tiny_run
from tests.serve import launch
from tests.serve.runs import train_runs

REQUIRE_ALL = "TABRASA_REQUIRE_ALL"


def require(available: bool, reason: str) -> None:
    """Skip the calling test with `reason` unless `available`; under TABRASA_REQUIRE_ALL=1, fail instead."""
    if available:
        return
    if os.environ.get(REQUIRE_ALL) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ALL}=1 turns this skip into a failure)")
    pytest.skip(reason)


def served(*modalities: str, tmp: Path | None = None, **runs: TrainedRun) -> ServedModel:
    """Tiny random classifiers (tests/deploy/conftest.py), one task per modality, plus any given runs."""
    tasks = {m: tiny_run(m, tmp=tmp) for m in modalities}
    return served_model({**tasks, **runs}, "tiny")


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run folders written by `tabrasa fit`: "text" (a Classifier) and "joint" (four modalities)."""
    return train_runs(tmp_path_factory.mktemp("serve-runs"))


@pytest.fixture(scope="session")
def joint_server(
    trained: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[launch.Server]:
    """The joint run served with batching on and a small body limit, shared by the slow tests."""
    log = tmp_path_factory.mktemp("joint-server") / "server.log"
    options = (
        "--max-batch-size",
        "8",
        "--batch-timeout",
        "0.02",
        "--max-bytes",
        "200000",
        "--log-level",
        "warning",
    )
    with launch.serving(trained["joint"], log, *options) as server:
        yield server
