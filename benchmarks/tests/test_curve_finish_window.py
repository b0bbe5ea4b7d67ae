"""`--finish-before`: a run starts only when its price says it ends in time; a longer one is passed over for
the next that fits, and the sweep says which run was too long."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_curves import main as bench_curves_main
from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey
from benchmarks.curves.finish_window import FinishWindow
from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.sweep import run_sweep
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RunLog
from benchmarks.tests.test_curves import fake_plan, fake_runner


def test_a_run_too_long_for_the_window_is_passed_over_for_one_that_fits(tmp_path: Path) -> None:
    plan = fake_plan()
    largest = max(plan.protocol.fractions)

    def short_only(plan: ModalityPlan, arm: Arm, key: RunKey) -> bool:
        return key.fraction < largest

    calls: list[RunKey] = []
    log_path = tmp_path / "runs.jsonl"
    assert not run_sweep([plan], log_path, fake_runner(calls), Lane(), parts=("curve",), fits=short_only)
    assert calls and all(key.fraction < largest for key in calls)  # it went on past the long ones
    ran = len(calls)
    # counter: with every run fitting, the same sweep trains the long runs too and finishes
    assert run_sweep([plan], log_path, fake_runner(calls), Lane(), parts=("curve",))
    assert any(key.fraction == largest for key in calls[ran:])


def window(tmp_path: Path, deadline: float, done: dict[str, float] | None = None) -> FinishWindow:
    plan = fake_plan()
    log = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)
    finished = RunKey(modality=plan.name, arm="cnn", fraction=0.01, lr=1e-3, seed=0)
    if not log.runs:
        log.add({**finished.__dict__, "seconds": 3600.0, "val_acc": 0.5, "test_acc": 0.5})
    return FinishWindow(deadline=deadline, log=log, plans=[plan], measured={}, done=done or {},
                        clock=lambda: 0.0)  # fmt: skip


def test_a_run_is_priced_by_its_arms_finished_runs_less_what_its_checkpoint_holds(tmp_path: Path) -> None:
    plan = fake_plan()
    key = RunKey(modality=plan.name, arm="cnn", fraction=0.01, lr=3e-3, seed=0)
    name = RunLog(None, KEY_FIELDS).name(key)
    half_hour = window(tmp_path, deadline=1800.0)
    assert not half_hour(plan, plan.arm("cnn"), key)  # its arm's run there took an hour
    assert f"1 run too long for the 0.5 h left: {name} needs 1.0 h" in half_hour.summary()
    assert window(tmp_path, deadline=3600.0)(plan, plan.arm("cnn"), key)  # counter: an hour fits an hour
    resumed = window(tmp_path, deadline=1800.0, done={name: 3000.0})
    assert resumed(plan, plan.arm("cnn"), key) and not resumed.summary()  # 10 minutes left of it


def test_a_finish_window_already_over_starts_nothing_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = ["--out", str(tmp_path), "--permutation-out", str(tmp_path / "summary.csv")]
    arm = ["--modalities", "image", "--arms", "floor_logreg"]
    bench_curves_main(["--smoke", *arm, "--finish-before", "2000-01-01T00:00", *outputs])
    assert "--finish-before 2000-01-01T00:00: the window is over" in capsys.readouterr().out
    assert not RunLog(tmp_path / "runs.jsonl", KEY_FIELDS).runs
