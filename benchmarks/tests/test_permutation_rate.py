"""The permuted runs' rate: the curve's choice unless the first seed's permuted run did not train there."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey
from benchmarks.curves.permutation_rate import did_not_train, permutation_rate
from benchmarks.curves.plan_cost import runs_left
from benchmarks.curves.report import modality_report, permutation_rows
from benchmarks.curves.sweep import needed_keys, run_sweep
from benchmarks.curves.validation_majority import backfill
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.majority import majority, majority_share
from benchmarks.evidence.rate_sweep import RunLog
from benchmarks.evidence.report import untrained_below
from benchmarks.tests.test_curves import fake_plan, fake_runner

MAJORITY = 0.1  # fake_runner's validation split: ten balanced classes
STUCK = 0.12  # below 0.1 + 10% of 0.9 = 0.19: a constant guess, give or take


def permuted_row(lr: float, val: float, seed: int = 0, test: float = 0.5) -> dict[str, Any]:
    return {
        "modality": "image", "arm": "cnn", "fraction": 1.0, "lr": lr, "seed": seed, "permuted": True,
        "val_acc": val, "test_acc": test, "val_majority": MAJORITY, "n_train": 10000, "n_test": 1000,
        "seconds": 1.0, "converged": True, "steps": 1, "epochs": 1, "stopped": "early",
    }  # fmt: skip


def curve_rows(tmp_path: Path) -> list[dict[str, Any]]:
    """A fake sweep's curve part (rate sweeps closed: the cnn chose 3e-3 at every fraction)."""
    log = tmp_path / "curve.jsonl"
    run_sweep([fake_plan()], log, fake_runner([]), Lane(), parts=("curve",))
    return [json.loads(line) for line in log.read_text().splitlines()]


def permuted_keys(rows: list[dict[str, Any]]) -> list[RunKey]:
    plan = fake_plan()
    keys, final = needed_keys(plan, plan.arm("cnn"), RunLog.of_runs(rows, KEY_FIELDS))
    assert final
    return [k for k in keys if k.permuted]


def test_a_run_within_the_margin_of_a_constant_guess_did_not_train() -> None:
    assert untrained_below(0.1) == pytest.approx(0.19)
    assert did_not_train(permuted_row(3e-3, STUCK))
    assert not did_not_train(permuted_row(3e-3, 0.2))  # counter: just past the margin
    # on a two-class split the bar is the majority's 0.5 + 0.05, not ten classes' chance
    assert did_not_train({**permuted_row(3e-3, 0.54), "val_majority": 0.5})


def test_a_row_without_its_majority_is_refused_with_the_command_that_adds_it() -> None:
    row = permuted_row(3e-3, STUCK)
    del row["val_majority"]
    with pytest.raises(ValueError, match=r"image/cnn f=1.0 lr=0.003 seed=0 .*validation_majority"):
        did_not_train(row)


def test_the_first_seed_decides_and_a_run_that_did_not_train_moves_the_rate_one_step_down() -> None:
    plan = fake_plan()
    arm = plan.arm("cnn")
    assert permutation_rate(plan, arm, 3e-3, []) == (3e-3, False, ())
    assert permutation_rate(plan, arm, 3e-3, [permuted_row(3e-3, 0.8)]) == (3e-3, True, ())
    # a later seed's failure decides nothing: only the first seed's runs choose
    later = [permuted_row(3e-3, 0.8), permuted_row(3e-3, STUCK, seed=1)]
    assert permutation_rate(plan, arm, 3e-3, later) == (3e-3, True, ())
    stuck = [permuted_row(3e-3, STUCK)]
    assert permutation_rate(plan, arm, 3e-3, stuck) == (1e-3, False, (3e-3,))
    assert permutation_rate(plan, arm, 3e-3, [*stuck, permuted_row(1e-3, 0.7)]) == (1e-3, True, (3e-3,))


def test_when_the_lower_rate_does_not_train_either_the_better_on_validation_stands() -> None:
    plan = fake_plan()
    rows = [permuted_row(3e-3, STUCK), permuted_row(1e-3, 0.15)]
    assert permutation_rate(plan, plan.arm("cnn"), 3e-3, rows) == (1e-3, True, (3e-3, 1e-3))
    rows = [permuted_row(3e-3, 0.15), permuted_row(1e-3, STUCK)]
    assert permutation_rate(plan, plan.arm("cnn"), 3e-3, rows) == (3e-3, True, (3e-3, 1e-3))
    # a protocol that never extends its rates (the smoke sweep's bracket 0) takes no step down
    smoke = replace(plan, protocol=replace(plan.protocol, bracket=0))
    assert permutation_rate(smoke, smoke.arm("cnn"), 3e-3, rows[:1]) == (3e-3, True, (3e-3,))


def test_the_later_seeds_permuted_runs_wait_for_the_first_seed_then_follow_its_rate(tmp_path: Path) -> None:
    rows = curve_rows(tmp_path)
    assert [(k.seed, k.lr) for k in permuted_keys(rows)] == [(0, 3e-3)]
    # counter: the first seed trained at the chosen rate, so every seed runs there
    assert [(k.seed, k.lr) for k in permuted_keys([*rows, permuted_row(3e-3, 0.8)])] == [
        (0, 3e-3), (1, 3e-3), (2, 3e-3)
    ]  # fmt: skip
    stuck = [*rows, permuted_row(3e-3, STUCK)]
    assert [(k.seed, k.lr) for k in permuted_keys(stuck)] == [(0, 1e-3)]
    trained = [*stuck, permuted_row(1e-3, 0.7)]
    assert [(k.seed, k.lr) for k in permuted_keys(trained)] == [(0, 1e-3), (1, 1e-3), (2, 1e-3)]


def test_the_plan_counts_the_seeds_a_pending_first_seed_holds_back(tmp_path: Path) -> None:
    plan = fake_plan()
    rows = curve_rows(tmp_path)
    assert runs_left(plan, plan.arm("cnn"), RunLog.of_runs(rows, KEY_FIELDS)) == 3
    stuck = [*rows, permuted_row(3e-3, STUCK)]
    assert runs_left(plan, plan.arm("cnn"), RunLog.of_runs(stuck, KEY_FIELDS)) == 3  # 1e-3 for each seed


def test_the_test_reads_the_trained_rate_and_the_report_names_the_untrained_run(tmp_path: Path) -> None:
    plan = fake_plan()
    rows = [*curve_rows(tmp_path), permuted_row(3e-3, STUCK, test=0.05)]
    rows += [permuted_row(1e-3, 0.7, seed, test=0.6) for seed in plan.protocol.seeds]
    (cnn,) = [r for r in permutation_rows(rows, {plan.name: plan}) if r["arm"] == "cnn"]
    assert cnn["seeds"] == 3 and cnn["acc_permuted"] == pytest.approx(0.6)  # the failed run is not averaged
    report = "\n".join(modality_report(plan, rows, {plan.name: plan}))
    assert "Permuted cnn runs train at 0.001: the first seed's permuted run did not train at 0.003" in report
    assert "validation 0.120, below 0.190" in report
    # counter: without the fall-back runs the report says what is tried next, and no test row is read
    pending = [*curve_rows(tmp_path), permuted_row(3e-3, STUCK)]
    assert "Permuted cnn runs try 0.001 next" in "\n".join(modality_report(plan, pending, {plan.name: plan}))
    assert not [r for r in permutation_rows(pending, {plan.name: plan}) if r["arm"] == "cnn"]
    neither = [*pending, permuted_row(1e-3, 0.15)]
    report = "\n".join(modality_report(plan, neither, {plan.name: plan}))
    assert "Permuted cnn runs stay at 0.001, the better on validation: not the rate" in report


def test_the_majority_share_counts_the_commonest_label() -> None:
    assert majority_share([0, 1, 1, 2]) == 0.5
    assert majority([2, 0, 2, 1, 2, 0]) == (2, 0.5)  # the label the preset table names, with its share
    with pytest.raises(ValueError, match="no labels"):
        majority_share([])


def test_the_backfill_gives_each_modality_one_share_and_keeps_what_rows_record() -> None:
    rows = [
        {"modality": "image", "n_val": 1000}, {"modality": "image", "n_val": 1000},
        {"modality": "text", "n_val": 1000, "val_majority": 0.5}, {"modality": "text", "n_val": 1000},
    ]  # fmt: skip
    asked: list[str] = []

    def share(plan: Any) -> float:
        asked.append(plan.name)
        return 0.103

    assert backfill(rows, share) == {"image": 0.103, "text": 0.5}
    assert asked == ["image"]  # text's own record is the share: its data is not built again
    assert [r["val_majority"] for r in rows] == [0.103, 0.103, 0.5, 0.5]


def test_the_backfill_refuses_a_modality_validated_on_splits_of_different_sizes() -> None:
    rows = [{"modality": "image", "n_val": 1000}, {"modality": "image", "n_val": 500}]
    with pytest.raises(ValueError, match=r"modality image: its runs were validated on \[500, 1000\]"):
        backfill(rows, lambda plan: 0.1)
