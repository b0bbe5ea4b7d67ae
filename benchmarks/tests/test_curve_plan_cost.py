"""The report's price of the plan: runs left counted from the sweep's own order, each priced by its arm and
fraction from the nearest evidence (the arm's own runs, its measured price, the modality's runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.curves.early_stopped_run import KEY_FIELDS
from benchmarks.curves.plan import ModalityPlan
from benchmarks.curves.plan_cost import measured_prices, plan_cost, priced_by, runs_left
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
    assert cost.runs_left == 1 and cost.hours_left == pytest.approx(1 / 3600)
    assert [(a.arm, a.runs_left, a.priced_by) for a in cost.arms] == [("cnn", 1, ("the arm's own runs",))]


def test_a_modality_without_runs_is_priced_by_every_modality_s_runs(tmp_path: Path) -> None:
    image, text = fake_plan("image"), fake_plan("text")
    rows = [{**r, "seconds": 7.0} for r in _finished(image, tmp_path)]
    cost = plan_cost(text, rows, [image, text])
    assert priced_by(cost) == "every modality's runs"
    assert cost.hours_left == pytest.approx(28 * 7.0 / 3600)  # the floor's 3 fits are not priced


def test_an_arm_without_runs_is_priced_at_each_fraction_by_its_measured_price(tmp_path: Path) -> None:
    plan = fake_plan()
    rows = [r for r in _finished(plan, tmp_path) if r["arm"] != "cnn"]  # 1 s a run
    measured = {("image", "cnn"): {0.01: 100.0, 0.1: 200.0, 1.0: 1000.0}}
    cost = plan_cost(plan, rows, [plan], measured)
    # both rate sweeps' first two rates, seed 0 at 0.1, seeds 1 and 2 at every fraction, 3 permuted at 1.0
    seconds = 2 * 100 + 2 * 1000 + 200 + 2 * (100 + 200 + 1000) + 3 * 1000
    assert cost.runs_left == 14 and cost.hours_left == pytest.approx(seconds / 3600)
    assert priced_by(cost) == "the arm's measured price"
    assert cost.arms[0].longest_hours == pytest.approx(1000 / 3600)  # what a loan must last for its runs


def test_counter_without_its_measured_price_the_arm_is_priced_by_the_modality_s_runs(tmp_path: Path) -> None:
    plan = fake_plan()
    rows = [r for r in _finished(plan, tmp_path) if r["arm"] != "cnn"]
    cost = plan_cost(plan, rows, [plan])
    assert cost.runs_left == 14 and cost.hours_left == pytest.approx(14 / 3600)
    assert priced_by(cost) == "the modality's runs"


def test_measured_prices_read_what_bench_arm_cost_writes(tmp_path: Path) -> None:
    fractions = [{"fraction": 0.03, "run_hours_typical": 2.0}, {"fraction": 1.0, "run_hours_typical": 0.5}]
    report = {"modality": "audio", "arm": "cnn", "fractions": fractions}
    (tmp_path / "audio_cnn.json").write_text(json.dumps(report))
    assert measured_prices(tmp_path) == {("audio", "cnn"): {0.03: 7200.0, 1.0: 1800.0}}
    assert measured_prices(tmp_path / "absent") == {}
    committed = measured_prices(Path(__file__).resolve().parents[2] / "results" / "curves" / "arm_cost")
    assert set(committed[("audio", "spectrogram_cnn")]) == {0.03, 0.1, 0.3, 1.0}


def test_a_log_view_refuses_to_add_a_run() -> None:
    log = RunLog.of_runs([], KEY_FIELDS)
    with pytest.raises(ValueError, match="view of finished runs"):
        log.add({name: 0 for name in KEY_FIELDS})


def _finished(plan: ModalityPlan, tmp_path: Path) -> list[dict[str, Any]]:
    log_path = tmp_path / "image.jsonl"
    run_sweep([plan], log_path, fake_runner([]), Lane())
    return [json.loads(line) for line in log_path.read_text().splitlines()]
