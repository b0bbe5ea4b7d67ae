"""FitClock carries a run's training time through its checkpoints; the card names the checkpoint resumed
from without a machine's absolute path."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tabrasa.training.fit_clock import FitClock
from tabrasa.training.run_card import EarlierSegments, relative_to_run


def test_a_resumed_clock_adds_its_own_seconds_to_the_earlier_segments() -> None:
    first = FitClock()
    first.on_fit_start(None, None)  # type: ignore[arg-type]
    time.sleep(0.05)
    saved = first.state_dict()
    assert saved["segments"] == 1 and saved["fit_seconds"] >= 0.05

    resumed = FitClock()
    resumed.load_state_dict(saved)
    assert resumed.earlier == EarlierSegments(1, saved["fit_seconds"], saved["fit_cpu_seconds"])
    resumed.on_fit_start(None, None)  # type: ignore[arg-type]
    time.sleep(0.05)
    again = resumed.state_dict()
    assert again["segments"] == 2
    assert again["fit_seconds"] >= saved["fit_seconds"] + 0.05


def test_a_clock_started_before_data_setup_keeps_its_start_through_fit_start() -> None:
    """`tabrasa fit` starts the clock in before_fit, as it starts the card's: on_fit_start (after the data's
    setup) must not restart it, or a resumed card would count setup for its last segment only."""
    clock = FitClock()
    clock.start()
    time.sleep(0.05)  # the data's setup
    clock.on_fit_start(None, None)  # type: ignore[arg-type]
    wall, _ = clock.this_process()
    assert wall >= 0.05 and clock.state_dict()["fit_seconds"] >= 0.05


def test_a_clock_that_never_started_reports_only_the_earlier_segments() -> None:
    clock = FitClock()
    assert clock.state_dict() == {"segments": 1, "fit_seconds": 0.0, "fit_cpu_seconds": 0.0}


@pytest.mark.parametrize(
    ("checkpoint", "expected"),
    [
        ("run/version_0/checkpoints/last.ckpt", "../version_0/checkpoints/last.ckpt"),
        ("elsewhere/last.ckpt", "last.ckpt"),  # outside the logger run: its name only
        (None, None),
    ],
)
def test_the_checkpoint_resumed_from_is_named_relative_to_the_run(
    tmp_path: Path, checkpoint: str | None, expected: str | None
) -> None:
    folder = tmp_path / "run" / "version_1"
    folder.mkdir(parents=True)
    path = None if checkpoint is None else str(tmp_path / checkpoint)
    assert relative_to_run(path, folder) == expected
