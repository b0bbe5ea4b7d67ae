"""The report's price of the plan: runs left counted from the sweep's own order, priced by finished runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.curves.early_stopped_run import KEY_FIELDS
from benchmarks.curves.plan import ModalityPlan
from benchmarks.curves.plan_cost import plan_cost, runs_left
from benchmarks.curves.sweep import run_sweep
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RunLog
from benchmarks.tests.test_curves import fake_plan, fake_runner


def test_an_untouched_plan_counts_both_rate_sweeps_every_seed_and_the_permutation_runs() -> None:
    plan = fake_plan()  # 3 fractions, 3 seeds, 2 starting rates
    log = RunLog.of_runs([], KEY_FIELDS)
    # 2 rates at each swept end, then 3 seeds x 3 fractions less the first seed's two swept ends, 3 permuted
    assert runs_left(plan, plan.arm("transformer"), log) == 4 + 7 + 3
    assert runs_left(plan, plan.arm("floor_logreg"), log) == 3  # one fit a fraction
    cost = plan_cost(plan, [], [plan])
    assert (cost.runs_done, cost.runs_left, cost.hours_left) == (0, 2 * 14 + 3, 0.0)


def test_a_finished_sweep_leaves_nothing_and_one_lost_run_is_counted_and_priced(tmp_path: Path) -> None:
    plan = fake_plan()
    log_path = tmp_path / "runs.jsonl"
    run_sweep([plan], log_path, fake_runner([]), Lane())
    rows = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert plan_cost(plan, rows, [plan]).runs_left == 0
    hours = sum(r["seconds"] for r in rows) / 3600
    assert plan_cost(plan, rows, [plan]).hours_done == pytest.approx(hours)
    last_curve_run = next(r for r in reversed(rows) if r["arm"] == "cnn" and not r["permuted"])
    fewer = [r for r in rows if r is not last_curve_run]
    cost = plan_cost(plan, fewer, [plan])
    assert cost.runs_left == 1 and cost.seconds_a_run == 1.0 and cost.hours_left == pytest.approx(1 / 3600)
    assert cost.priced_by == "its own runs"


def test_a_modality_without_runs_is_priced_by_every_modality_s_runs(tmp_path: Path) -> None:
    image, text = fake_plan("image"), fake_plan("text")
    rows = [{**r, "seconds": 7.0} for r in _finished(image, tmp_path)]
    cost = plan_cost(text, rows, [image, text])
    assert cost.priced_by == "every modality's runs" and cost.seconds_a_run == 7.0
    assert cost.hours_left == pytest.approx(28 * 7.0 / 3600)  # the floor's 3 fits are not priced


def test_a_log_view_refuses_to_add_a_run() -> None:
    log = RunLog.of_runs([], KEY_FIELDS)
    with pytest.raises(ValueError, match="view of finished runs"):
        log.add({name: 0 for name in KEY_FIELDS})


def _finished(plan: ModalityPlan, tmp_path: Path) -> list[dict[str, Any]]:
    log_path = tmp_path / "image.jsonl"
    run_sweep([plan], log_path, fake_runner([]), Lane())
    return [json.loads(line) for line in log_path.read_text().splitlines()]
