"""The rate protocol every sweep shares: validation chooses, test never does, and a finished sweep resumes."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.evidence.arms import SWEEPS, Sweep
from benchmarks.evidence.rate_sweep import Budget, RunLog, arm_result, run_arm


@dataclass(frozen=True, kw_only=True)
class Key:
    arm: str
    lr: float
    seed: int


FIELDS = ("arm", "lr", "seed")
BUDGET = Budget(
    learning_rates=(1e-4, 1e-3, 1e-2), seeds=(0, 1, 2), steps=1, limit=None, batch_size=1, quick=False
)


def _log(tmp_path: Path, runs: list[dict[str, Any]]) -> RunLog:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return RunLog(path, FIELDS)


def test_best_rate_follows_validation_and_ignores_test(tmp_path: Path) -> None:
    # Test accuracy would pick 1e-2 (0.99); validation picks 1e-3 (0.80).
    log = _log(
        tmp_path,
        [
            {"arm": "a", "lr": 1e-4, "seed": 0, "val_acc": 0.60, "test_acc": 0.50},
            {"arm": "a", "lr": 1e-3, "seed": 0, "val_acc": 0.80, "test_acc": 0.40},
            {"arm": "a", "lr": 1e-2, "seed": 0, "val_acc": 0.70, "test_acc": 0.99},
        ],
    )
    keys = [Key(arm="a", lr=lr, seed=0) for lr in BUDGET.learning_rates]
    assert log.best_rate(keys) == 1e-3


def test_best_rate_breaks_ties_toward_the_smaller_rate_and_refuses_missing_runs(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        [
            {"arm": "a", "lr": 1e-4, "seed": 0, "val_acc": 0.7, "test_acc": 0.1},
            {"arm": "a", "lr": 1e-3, "seed": 0, "val_acc": 0.7, "test_acc": 0.9},
        ],
    )
    assert log.best_rate([Key(arm="a", lr=1e-3, seed=0), Key(arm="a", lr=1e-4, seed=0)]) == 1e-4
    with pytest.raises(LookupError, match=r"a/0\.01/0 has not run yet"):
        log.best_rate([Key(arm="a", lr=1e-2, seed=0)])


def test_run_arm_sweeps_at_the_first_seed_then_repeats_the_chosen_rate_and_resumes(tmp_path: Path) -> None:
    val = {1e-4: 0.5, 1e-3: 0.9, 1e-2: 0.7}
    test = {1e-4: 0.9, 1e-3: 0.1, 1e-2: 0.5}  # the opposite ranking: must not matter
    trained: list[tuple[float, int]] = []

    def train(key: Any) -> dict[str, Any]:
        trained.append((key.lr, key.seed))
        return {"val_acc": val[key.lr], "test_acc": test[key.lr] + key.seed / 100, "train_seconds": 0.0}

    log = RunLog(tmp_path / "runs.jsonl", FIELDS)
    run_arm(Key(arm="a", lr=0.0, seed=0), BUDGET, log, train)
    assert trained == [(1e-4, 0), (1e-3, 0), (1e-2, 0), (1e-3, 1), (1e-3, 2)]

    resumed = RunLog(tmp_path / "runs.jsonl", FIELDS)
    run_arm(Key(arm="a", lr=0.0, seed=0), BUDGET, resumed, train)
    assert len(trained) == 5, "a finished arm reruns nothing"

    result = arm_result(Key(arm="a", lr=0.0, seed=0), BUDGET, resumed)
    assert result is not None and result.lr == 1e-3
    assert [r["seed"] for r in result.runs] == [0, 1, 2]
    assert result.test_mean == pytest.approx(0.11) and result.test_std == pytest.approx(0.01)
    assert arm_result(Key(arm="b", lr=0.0, seed=0), BUDGET, resumed) is None, (
        "an arm not run yet has no result"
    )


def test_bracketing_extends_past_an_edge_best_until_a_worse_rate_lies_beyond_it(tmp_path: Path) -> None:
    # Validation peaks at 1e-2 / 3 ** 2 above the budget's rates; test would pick the far end (0.99).
    peak = 1e-2 * 9
    budget = replace(BUDGET, learning_rates=(1e-3, 1e-2), seeds=(0, 1), bracket=3)

    def val(lr: float) -> float:
        return 1.0 - abs(math.log10(lr / peak))

    trained: list[float] = []

    def train(key: Any) -> dict[str, Any]:
        trained.append(key.lr)
        return {"val_acc": val(key.lr), "test_acc": 0.99 if key.lr > peak else 0.5, "train_seconds": 0.0}

    log = RunLog(tmp_path / "runs.jsonl", FIELDS)
    run_arm(Key(arm="a", lr=0.0, seed=0), budget, log, train)
    # 1e-3, 1e-2 (edge) → 3e-2 (edge) → 9e-2 (edge) → 2.7e-1 (worse): the best, 9e-2, is bracketed.
    assert trained == pytest.approx([1e-3, 1e-2, 3e-2, 9e-2, 2.7e-1, 9e-2])
    result = arm_result(Key(arm="a", lr=0.0, seed=0), budget, RunLog(tmp_path / "runs.jsonl", FIELDS))
    assert result is not None and result.lr == pytest.approx(9e-2) and result.bracketed
    assert result.rates == pytest.approx((1e-3, 1e-2, 3e-2, 9e-2, 2.7e-1))


def test_bracketing_stops_at_its_limit_and_says_the_rate_is_not_bracketed(tmp_path: Path) -> None:
    budget = replace(BUDGET, learning_rates=(1e-3, 1e-2), seeds=(0,), bracket=1)
    log = RunLog(tmp_path / "runs.jsonl", FIELDS)
    run_arm(Key(arm="a", lr=0.0, seed=0), budget, log, lambda key: {"val_acc": key.lr, "test_acc": 0.0})
    result = arm_result(Key(arm="a", lr=0.0, seed=0), budget, log)
    assert result is not None and result.lr == pytest.approx(3e-2) and not result.bracketed
    with pytest.raises(ValueError, match="bracket=1 needs at least two learning_rates"):
        replace(BUDGET, learning_rates=(1e-3,), bracket=1)


def test_budgets_are_keyword_only_and_name_the_bad_field() -> None:
    with pytest.raises(TypeError):
        Sweep((0.5, 1.0), (1e-3,), (0, 1), 2, 48, 16, True)  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"Sweep.fractions=\(1.0, 0.5\) must increase"):
        Sweep(
            fractions=(1.0, 0.5),
            learning_rates=(1e-3,),
            seeds=(0,),
            steps=1,
            limit=None,
            batch_size=1,
            quick=True,
        )
    with pytest.raises(ValueError, match=r"Budget\.limit=0 must be >= 1, or None"):
        Budget(learning_rates=(1e-3,), seeds=(0,), steps=1, limit=0, batch_size=1, quick=True)
    with pytest.raises(ValueError, match=r"Budget\.learning_rates=.*repeats a rate"):
        Budget(learning_rates=(1e-3, 1e-3), seeds=(0,), steps=1, limit=None, batch_size=1, quick=True)


def test_budget_overrides_carry_rate_seed_steps_and_limit() -> None:
    args = SWEEPS["smoke"].cli_args(3e-3, 1)
    pairs = dict(zip(args[::2], args[1::2], strict=True))
    assert pairs["--model.init_args.optimizer.lr"] == "0.003" and pairs["--seed_everything"] == "1"
    assert pairs["--trainer.max_steps"] == "2" and pairs["--data.init_args.limit"] == "48"
    assert pairs["--data.init_args.seed"] == "0", "splits stay fixed across seeds"
