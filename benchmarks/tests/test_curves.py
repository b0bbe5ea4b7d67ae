"""The data-using protocol: bracketed rates chosen on validation, resumable sweeps, intervals that stay in
[0, 1], gap slopes and closing sizes that recover a known curve, and one real early-stopped run."""

from __future__ import annotations

import csv
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from benchmarks.bench_curves import main as bench_curves_main
from benchmarks.curves import report
from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey, run_args, train_and_score
from benchmarks.curves.plan import MODALITIES, Arm, ModalityPlan, Protocol
from benchmarks.curves.rates import at_edge, best_rate, interpolated_rate, next_rate, snap
from benchmarks.curves.report import (
    PERMUTATION_COLUMNS,
    POINT_COLUMNS,
    modality_report,
    permutation_rows,
    solver_cost_lines,
    write_permutation,
    write_points,
)
from benchmarks.curves.sweep import run_sweep, start_window
from benchmarks.curves.teachers import Teacher
from benchmarks.curves.verdict import Point, verdict, wilson
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RunLog
from tests.availability import require_module

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = Protocol(fractions=(0.01, 0.1, 1.0), seeds=(0, 1, 2), rates=(1e-3, 3e-3), bracket=2)


def test_wilson_stays_inside_zero_one_and_matches_known_values() -> None:
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)  # the textbook 0/10 interval
    low, high = wilson(99, 100)
    assert high <= 1.0 and low == pytest.approx(0.9455, abs=1e-4)
    # counter: the t-interval the old tables used leaves [0, 1] at these sizes; Wilson does not
    p, n = 0.99, 100
    assert p + 1.96 * math.sqrt(p * (1 - p) / n) > 1.0 or wilson(99, 100)[1] <= 1.0


def scores_of(curve: dict[float, float]) -> dict[float, float]:
    """Run a bracketed sweep against a known validation curve; the scores it collected."""
    scores: dict[float, float] = {}
    while (rate := next_rate(scores, PROTOCOL)) is not None:
        scores[rate] = curve.get(rate, 0.0)
    return scores


def test_an_interior_best_rate_stops_the_sweep_at_the_initial_grid_plus_none() -> None:
    scores = scores_of({1e-3: 0.8, 3e-3: 0.7, 3.33e-4: 0.6})
    assert best_rate(scores) == 1e-3 and not at_edge(scores)
    assert sorted(scores) == [3.33e-4, 1e-3, 3e-3]


def test_an_edge_winner_extends_the_grid_until_bracketed() -> None:
    curve = {1e-3: 0.5, 3e-3: 0.6, 9e-3: 0.7, 0.027: 0.65}
    scores = scores_of(curve)
    assert best_rate(scores) == 9e-3 and not at_edge(scores)
    assert 0.027 in scores


def test_counter_a_rate_still_at_the_edge_after_the_bracket_is_flagged() -> None:
    scores = scores_of({1e-3: 0.5, 3e-3: 0.6, 9e-3: 0.7, 0.027: 0.8})  # keeps rising
    assert best_rate(scores) == 0.027 and at_edge(scores)  # two extensions used, reported as at an edge


def test_middle_fractions_interpolate_in_log_space_and_snap_to_the_grid() -> None:
    ends = {0.01: 1e-3, 1.0: 9e-3}
    assert interpolated_rate(0.1, ends, PROTOCOL) == snap(3e-3, PROTOCOL) == 3e-3
    assert interpolated_rate(0.01, ends, PROTOCOL) == 1e-3


def fake_plan(modality: str = "image") -> ModalityPlan:
    arms = (Arm(name="transformer", config="c.yaml"), Arm(name="cnn", config="c.yaml", baseline=True),
            Arm(name="floor_logreg", config="c.yaml"))  # fmt: skip
    return replace(MODALITIES[modality], arms=arms, protocol=PROTOCOL)


def fake_runner(calls: list[RunKey]) -> Any:
    """Validation peaks at 3e-3; test peaks at 1e-3, so a sweep that read test would choose wrongly."""

    def run(plan: ModalityPlan, arm: Arm, key: RunKey) -> dict[str, Any]:
        calls.append(key)
        val = 0.9 - abs(math.log10(key.lr / 3e-3)) / 10 if key.lr else 0.5
        test = 0.9 - abs(math.log10(key.lr / 1e-3)) / 10 if key.lr else 0.5
        bonus = 0.05 * math.log10(key.fraction * 100) + 0.01 * key.seed
        return {
            **key.__dict__, "val_acc": val + bonus, "test_acc": test + bonus,
            "n_train": int(key.fraction * 1e4), "n_test": 1000, "seconds": 1.0, "converged": True,
            "steps": 1, "epochs": 1, "stopped": "early", "val_majority": 0.1,
        }  # fmt: skip

    return run


def test_the_sweep_chooses_rates_on_validation_runs_every_seed_and_resumes(tmp_path: Path) -> None:
    calls: list[RunKey] = []
    plan = fake_plan()
    run_sweep([plan], tmp_path / "runs.jsonl", fake_runner(calls), Lane())
    curve = [k for k in calls if k.arm == "transformer" and not k.permuted and k.lr == 3e-3]
    assert {(k.fraction, k.seed) for k in curve} == {
        (f, s) for f in PROTOCOL.fractions for s in PROTOCOL.seeds
    }
    assert not [k for k in calls if k.arm == "transformer" and k.fraction == 0.1 and k.lr != 3e-3]
    assert {k.seed for k in calls if k.permuted and k.arm == "cnn"} == {0, 1, 2}
    assert [k.fraction for k in calls if k.arm == "floor_logreg"] == list(PROTOCOL.fractions)
    first = len(calls)
    run_sweep([plan], tmp_path / "runs.jsonl", fake_runner(calls), Lane())
    assert len(calls) == first  # resumed: nothing ran twice


def test_parts_split_an_arms_curve_from_its_permutation_runs(tmp_path: Path) -> None:
    curve: list[RunKey] = []
    run_sweep([fake_plan()], tmp_path / "runs.jsonl", fake_runner(curve), Lane(), parts=("curve",))
    assert curve and not [k for k in curve if k.permuted]
    permuted: list[RunKey] = []
    run_sweep([fake_plan()], tmp_path / "runs.jsonl", fake_runner(permuted), Lane(), parts=("permutation",))
    assert permuted and all(k.permuted for k in permuted)  # the rate sweeps were in the log: none reran
    with pytest.raises(ValueError, match="choose one or more"):
        run_sweep([fake_plan()], tmp_path / "runs.jsonl", fake_runner([]), Lane(), parts=())


def test_a_start_window_stops_the_sweep_between_runs_and_a_rerun_resumes_it(tmp_path: Path) -> None:
    now = [0.0]
    window = start_window(1.0, clock=lambda: now[0])  # runs may start for one hour
    calls: list[RunKey] = []

    def run(plan: ModalityPlan, arm: Arm, key: RunKey) -> dict[str, Any]:
        now[0] += 1200.0  # every run takes 20 minutes
        return fake_runner(calls)(plan, arm, key)

    log = tmp_path / "runs.jsonl"
    assert not run_sweep([fake_plan()], log, run, Lane(), may_start=window)
    # started at 0, 20 and 40 minutes; the third ran past the hour and was logged whole
    assert len(calls) == 3 and len(RunLog(log, KEY_FIELDS).runs) == 3
    assert run_sweep([fake_plan()], log, fake_runner(calls), Lane())  # no window: the rest, nothing twice
    assert len(set(calls)) == len(calls) > 3
    # counter: without a window the same sweep runs to its end in one call
    unbounded = start_window(None)
    assert run_sweep([fake_plan()], tmp_path / "other.jsonl", fake_runner([]), Lane(), may_start=unbounded)


def test_a_start_window_must_be_positive_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench_curves_main(["--start-within", "0", "--report-only"])
    assert "--start-within 0.0: give the hours in which runs may start, > 0" in capsys.readouterr().err


def test_a_sweep_reached_after_its_clock_time_window_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = ["--out", str(tmp_path), "--permutation-out", str(tmp_path / "summary.csv")]

    def sweep(until: str) -> dict[Any, Any]:
        arm = ["--modalities", "image", "--arms", "floor_logreg"]
        bench_curves_main(["--smoke", *arm, "--start-before", until, *outputs])
        return RunLog(tmp_path / "runs.jsonl", KEY_FIELDS).runs

    assert not sweep("2000-01-01T00:00")
    over = "--start-before 2000-01-01T00:00: the window is over; the same command resumes"
    assert over in capsys.readouterr().out
    assert len(sweep("2999-01-01T00:00")) == 2  # counter: inside its window the same command trains the floor
    with pytest.raises(SystemExit):
        bench_curves_main(["--start-before", "at five", "--report-only"])
    assert "'at five' is not a date and time; write it as 2026-12-07T05:25" in capsys.readouterr().err


def test_the_verdict_compares_against_baselines_with_a_prior_never_a_mixer(tmp_path: Path) -> None:
    plan = fake_plan()
    plan = replace(plan, arms=(*plan.arms, Arm(name="mamba", config="c.yaml")))
    calls: list[RunKey] = []
    base = fake_runner(calls)

    def run(plan: ModalityPlan, arm: Arm, key: RunKey) -> dict[str, Any]:
        record = base(plan, arm, key)
        if arm.name == "mamba":  # the best arm on validation: it must still not be the baseline
            record = {**record, "val_acc": record["val_acc"] + 0.05}
        return record

    run_sweep([plan], tmp_path / "runs.jsonl", run, Lane(), parts=("curve",))
    rows = list(RunLog(tmp_path / "runs.jsonl", KEY_FIELDS).runs.values())
    gap_rows = [line for line in modality_report(plan, rows, {plan.name: plan}) if line.startswith("| 1")]
    assert gap_rows and all("| cnn |" in line for line in gap_rows)
    assert not [line for line in gap_rows if "mamba" in line]


def test_only_finished_curves_enter_the_verdict_and_an_unfinished_baseline_is_named(tmp_path: Path) -> None:
    plan = fake_plan()
    plan = replace(plan, arms=(*plan.arms, Arm(name="cnn2d", config="c.yaml", baseline=True)))
    base = fake_runner([])

    def run(plan: ModalityPlan, arm: Arm, key: RunKey) -> dict[str, Any]:
        record = base(plan, arm, key)
        if arm.name == "cnn2d":  # the better baseline on validation wherever it has run
            record = {**record, "val_acc": record["val_acc"] + 0.05}
        return record

    run_sweep([plan], tmp_path / "runs.jsonl", run, Lane(), parts=("curve",))
    rows = list(RunLog(tmp_path / "runs.jsonl", KEY_FIELDS).runs.values())
    smallest = min(float(r["fraction"]) for r in rows)

    def gap_rows(lines: list[str]) -> list[str]:
        return [line for line in lines if line.startswith("| 1")]

    finished = modality_report(plan, rows, {plan.name: plan})
    assert gap_rows(finished) and all("| cnn2d |" in line for line in gap_rows(finished))
    assert not [line for line in finished if line.startswith("Left out of the verdict")]
    # cnn2d's rate sweep still open: one run at the smallest fraction must not swap the baseline there
    partial = [r for r in rows if r["arm"] != "cnn2d" or (r["fraction"] == smallest and r["seed"] == 0)]
    lines = modality_report(plan, partial, {plan.name: plan})
    assert gap_rows(lines) and all("| cnn |" in line for line in gap_rows(lines))
    assert "Left out of the verdict until their curves finish: cnn2d." in lines
    no_transformer = [r for r in rows if r["arm"] != "transformer" or r["seed"] == 0]
    lines = modality_report(plan, no_transformer, {plan.name: plan})
    assert "Verdict: not yet (the transformer's curve is unfinished)." in lines and not gap_rows(lines)


def test_the_report_sums_a_solver_arm_s_evaluations_and_names_runs_that_lack_them() -> None:
    rows = [
        {"arm": "ode", "nfe": 4, "nfe_total": 1000},
        {"arm": "ode", "nfe": 4, "nfe_total": 3000},
        {"arm": "ode"},  # recorded before the count was kept
        {"arm": "transformer"},
    ]
    lines = solver_cost_lines(rows)
    assert lines[0] == (
        "Solver cost of ode: 4 evaluations of f a forward solve; 4,000 over 2 runs (2,000 a run);"
        " 1 earlier run did not record it."
    )
    assert not solver_cost_lines([r for r in rows if r["arm"] == "transformer"])  # no solver, no line


def test_lanes_split_arms_without_overlap(tmp_path: Path) -> None:
    seen: list[set[str]] = []
    for index in range(2):
        calls: list[RunKey] = []
        run_sweep([fake_plan()], tmp_path / f"lane{index}.jsonl", fake_runner(calls), Lane(index, 2))
        seen.append({k.arm for k in calls})
    assert not seen[0] & seen[1] and seen[0] | seen[1] == {"transformer", "cnn", "floor_logreg"}


def point(arm: str, fraction: float, n: int, accs: tuple[float, ...]) -> Point:
    return Point(arm=arm, fraction=fraction, n_train=n, test=accs, n_test=(10_000,) * len(accs), val=accs)


def table_for(gap_at: dict[int, float]) -> dict[tuple[str, float], Point]:
    table = {}
    for i, (n, gap) in enumerate(sorted(gap_at.items())):
        fraction = n / 10_000
        base = (0.80, 0.801, 0.799)
        table[("cnn", fraction)] = point("cnn", fraction, n, base)
        table[("transformer", fraction)] = point("transformer", fraction, n, tuple(b + gap for b in base))
        del i
    return table


def test_a_gap_rising_two_points_a_decade_closes_where_the_line_says() -> None:
    # gap = -6 + 2·log10(n/100) points: zero at n = 100 · 10^3 = 100,000
    result = verdict(table_for({100: -0.06, 1000: -0.04, 10_000: -0.02}), "transformer", ["cnn"])
    assert result.reading == "closes"
    assert result.slope == pytest.approx(0.02, abs=1e-3)
    assert result.closes_at == pytest.approx(1e5, rel=0.1)
    assert result.closes_low < 1e5 < result.closes_high


def test_counter_a_flat_gap_does_not_close() -> None:
    result = verdict(table_for({100: -0.05, 1000: -0.05, 10_000: -0.051}), "transformer", ["cnn"])
    assert result.reading in ("does not close", "undetermined") and result.closes_at is None


def test_the_best_baseline_is_chosen_on_validation_not_test() -> None:
    table = table_for({100: -0.05, 1000: -0.04})
    for fraction in (0.01, 0.1):
        # "lucky" wins on test but loses on validation: it must not be the baseline compared against
        table[("lucky", fraction)] = Point("lucky", fraction, 1, (0.99,), (10_000,), (0.1,))
    assert {g.baseline for g in verdict(table, "transformer", ["cnn", "lucky"]).gaps} == {"cnn"}


def test_points_and_permutation_tables_have_the_documented_columns(tmp_path: Path) -> None:
    calls: list[RunKey] = []
    plan = fake_plan()
    run_sweep([plan], tmp_path / "runs.jsonl", fake_runner(calls), Lane())
    from benchmarks.curves.early_stopped_run import KEY_FIELDS
    from benchmarks.evidence.rate_sweep import RunLog

    rows = list(RunLog(tmp_path / "runs.jsonl", KEY_FIELDS).runs.values())
    write_points(rows, {plan.name: plan}, tmp_path / "points.csv")
    write_permutation(rows, {plan.name: plan}, tmp_path / "summary.csv")
    with (tmp_path / "points.csv").open() as handle:
        read = list(csv.DictReader(handle))
    assert tuple(read[0]) == POINT_COLUMNS and {r["stopped"] for r in read} <= {"early", "budget"}
    with (tmp_path / "summary.csv").open() as handle:
        summary = list(csv.DictReader(handle))
    assert tuple(summary[0]) == PERMUTATION_COLUMNS
    assert all(0 <= float(r["acc"]) <= 1 and float(r["delta_low"]) <= float(r["delta_high"]) for r in summary)


def test_an_arm_s_permutation_interval_does_not_move_when_another_arm_is_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = fake_plan()
    run_sweep([plan], tmp_path / "runs.jsonl", fake_runner([]), Lane())
    rows = list(RunLog(tmp_path / "runs.jsonl", KEY_FIELDS).runs.values())
    alone = [r for r in rows if r["arm"] != "cnn"]  # without the arm whose row comes first ("cnn" < "t…")

    def transformer_row(table: list[dict[str, Any]]) -> dict[str, Any]:
        return {r["arm"]: r for r in permutation_rows(table, {plan.name: plan})}["transformer"]

    assert transformer_row(alone) == transformer_row(rows)
    # counter: one stream shared in table order, as before, moves the transformer's interval once the cnn's
    # runs come before it
    monkeypatch.setattr(report, "arm_rng", lambda modality, arm: shared)
    shared = np.random.default_rng(0)
    before = transformer_row(alone)
    shared = np.random.default_rng(0)
    assert transformer_row(rows) != before


def test_run_args_carry_the_protocol_and_the_permutation() -> None:
    plan = MODALITIES["image"]
    key = RunKey(modality="image", arm="transformer", fraction=0.1, lr=3e-3, seed=2, permuted=True)
    args = run_args(ROOT, plan.arm("transformer"), key, plan.protocol, plan.permutation_flag)
    joined = " ".join(args)
    assert f"--trainer.max_epochs {plan.protocol.max_epochs}" in joined
    assert "--trainer.check_val_every_n_epoch 1" in joined
    assert "--model.init_args.backbone.init_args.config.dim 64" in joined
    assert f"{plan.permutation_flag} 0" in joined and "--seed_everything 2" in joined
    with pytest.raises(ValueError, match="no element permutation"):
        run_args(ROOT, plan.arm("transformer"), key, plan.protocol, "")


@pytest.mark.parametrize("modality", sorted(MODALITIES))
def test_every_network_arm_parses_at_the_protocol_width(
    modality: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The arguments each arm trains with parse, a swapped-in backbone (baseline or mixer) included, into a
    backbone of the protocol's width: a parse failure would leave the arm with no run at all."""
    from tabrasa.training.lightning_cli import build_cli

    plan = MODALITIES[modality]
    for arm in plan.arms:
        if arm.is_floor or arm.pretrain is not None:
            continue  # no network, or one that needs a pretraining export first
        key = RunKey(modality=modality, arm=arm.name, fraction=0.1, lr=1e-3, seed=0, permuted=False)
        # The teacher is read when fitting starts, not when parsing: a placeholder run parses like a real one.
        # The distilled arm layers a config naming its own backbone (configs/distill/imdb_small.yaml).
        teacher = Teacher(run="teacher-run", outputs="teacher-outputs") if arm.teacher is not None else None
        args = run_args(ROOT, arm, key, plan.protocol, plan.permutation_flag, teacher=teacher)
        capsys.readouterr()
        with pytest.raises(SystemExit):  # --print_config parses, prints and exits: nothing is built
            build_cli([*args, "--print_config"], run=False, save_config=False)
        backbone = yaml.safe_load(capsys.readouterr().out)["model"]["init_args"]["backbone"]["init_args"]
        assert backbone.get("config", backbone)["dim"] == plan.protocol.width, arm.name


def tiny_image_run(arm: str, max_epochs: int, limit: int, runs_folder: Path) -> dict[str, Any]:
    """One real early-stopped Fashion-MNIST run of `arm`, 16 wide, on `limit` images a split (half of it
    the validation split), batches of 16; its checkpoints under `runs_folder` until it is scored."""
    plan = MODALITIES["image"]
    protocol = Protocol(fractions=(1.0,), max_epochs=max_epochs, patience=1, min_steps=1, patience_steps=1,
                        batch_size=16, width=16, rates=(1e-3,),
                        data={"limit": limit, "val_size": limit // 2})  # fmt: skip
    key = RunKey(modality="image", arm=arm, fraction=1.0, lr=1e-3, seed=0)
    return train_and_score(ROOT, plan.arm(arm), key, protocol, plan.permutation_flag, runs_folder=runs_folder)


@pytest.mark.slow
def test_a_real_run_stops_on_validation_and_scores_the_best_checkpoint(tmp_path: Path) -> None:
    require_module("sklearn", "the floors' scikit-learn: pip install -e .[bench]")
    record = tiny_image_run("transformer", max_epochs=6, limit=96, runs_folder=tmp_path / "runs")
    assert record["stopped"] in ("early", "budget") and 1 <= record["epochs"] <= 6
    assert record["evaluations"] == record["epochs"] or record["stopped"] == "early"
    assert record["converged"] == (record["best_epoch"] != record["epochs"] - 1)
    assert record["n_test"] == 96 and 0 <= record["test_acc"] <= 1 and record["steps"] > 0
    assert "nfe" not in record and "nfe_total" not in record  # no solver, no solver cost
    assert 0.1 <= record["val_majority"] <= 1  # ten classes: the commonest holds a tenth at least
    assert list((tmp_path / "runs").glob("*")) == []  # a scored run's checkpoints are gone


@pytest.mark.slow
def test_a_continuous_depth_run_records_its_solver_evaluations(tmp_path: Path) -> None:
    record = tiny_image_run("ode", max_epochs=2, limit=32, runs_folder=tmp_path)
    # configs/backbone/ode.yaml: midpoint, 2 steps = 4 evaluations a forward solve
    assert record["nfe"] == 4
    # every training, validation and test batch solved once forward (direct backprop adds none)
    per_evaluation, test_batches = math.ceil(record["n_val"] / 16), math.ceil(record["n_test"] / 16)
    batches = record["steps"] + record["evaluations"] * per_evaluation + test_batches
    assert record["nfe_total"] == 4 * batches, record


def test_the_self_pretrained_arm_fine_tunes_its_export_at_its_own_fractions() -> None:
    plan = MODALITIES["image"]
    arm = plan.arm("self_pretrained")
    assert arm.fractions_of(plan.protocol) == (0.03, 1.0)
    key = RunKey(modality="image", arm=arm.name, fraction=0.03, lr=1e-3, seed=0)
    args = run_args(ROOT, arm, key, plan.protocol, plan.permutation_flag, export="results/x/export")
    assert '{"family": "tabrasa", "path": "results/x/export"}' in args
    with pytest.raises(ValueError, match="needs its pretraining export"):
        run_args(ROOT, arm, key, plan.protocol, plan.permutation_flag)


def test_a_partial_sweep_reads_the_gap_from_the_fractions_both_arms_have() -> None:
    table = table_for({300: -0.05, 1000: -0.04, 3000: -0.03, 10_000: -0.02})
    del table[("cnn", 0.1)]  # the baseline has not run there yet
    result = verdict(table, "transformer", ["cnn"])
    assert result.missing == (0.1,) and [g.n_train for g in result.gaps] == [300, 3000, 10_000]
    with pytest.raises(LookupError, match="two fractions"):  # counter: one shared fraction gives no slope
        verdict({k: v for k, v in table.items() if k[1] in (0.03, 0.1)}, "transformer", ["cnn"])


def test_the_self_pretrained_arm_takes_no_permutation_test_and_its_logged_runs_are_not_reported(
    tmp_path: Path,
) -> None:
    for modality, plan in MODALITIES.items():
        assert not plan.arm("self_pretrained").permutation_test, modality  # pretrained on unshuffled inputs
    plan = fake_plan()
    run_sweep([plan], tmp_path / "runs.jsonl", fake_runner([]), Lane())
    rows = list(RunLog(tmp_path / "runs.jsonl", KEY_FIELDS).runs.values())
    assert "cnn" in {r["arm"] for r in permutation_rows(rows, {plan.name: plan})}
    # the same log once the cnn has left the test: its permuted runs stay in the log, out of the summary
    left = replace(plan, arms=tuple(replace(a, permutation_test=a.name != "cnn") for a in plan.arms))
    reported = {r["arm"] for r in permutation_rows(rows, {left.name: left})}
    assert "cnn" not in reported and "transformer" in reported
