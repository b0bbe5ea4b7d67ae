"""The learning-curve benchmark: the report from a hand-written runs.jsonl, the crossover rule, and a tiny
end-to-end sweep that resumes without rerunning."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks.evidence import sweep_main
from benchmarks.evidence.arms import SWEEPS
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.learning_curve_report import markdown_table
from benchmarks.evidence.learning_curves import KEY_FIELDS, Point, crossover, summarise
from benchmarks.evidence.rate_sweep import RunLog

ROOT = Path(__file__).resolve().parents[2]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_generalization", ROOT / "benchmarks" / "bench_generalization.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(arm: str, fraction: float, lr: float, seed: int, val: float, test: float) -> dict[str, Any]:
    return {
        "modality": "text", "arm": arm, "fraction": fraction, "lr": lr, "seed": seed,
        "val_acc": val, "test_acc": test, "train_examples": int(100 * fraction), "train_seconds": 1.0,
    }  # fmt: skip


# The smoke sweep's grid (fractions 0.5 and 1.0, one rate 1e-3, seeds 0 and 1), by hand.
HAND_RUNS = [
    _run("small", 0.5, 1e-3, 0, 0.6, 0.50),
    _run("small", 0.5, 1e-3, 1, 0.6, 0.70),
    _run("small", 1.0, 1e-3, 0, 0.8, 0.90),
    _run("small", 1.0, 1e-3, 1, 0.8, 0.80),
    _run("sequence_cnn", 0.5, 1e-3, 0, 0.7, 0.65),
    _run("sequence_cnn", 0.5, 1e-3, 1, 0.7, 0.65),
    _run("sequence_cnn", 1.0, 1e-3, 0, 0.7, 0.70),
    _run("sequence_cnn", 1.0, 1e-3, 1, 0.7, 0.70),
]

EXPECTED_TABLE = (  # fmt: skip
    "| modality | arm | fraction | train examples | lr (val) of the rates swept | "
    "test acc, mean [95% interval] | seeds |\n"
    "|---|---|---|---|---|---|---|\n"
    "| text | small | 0.5 | 50 | 0.001 | 0.600 [-0.671, 1.871] | 2 |\n"
    "| text | small | 1 | 100 | 0.001 | 0.850 [0.215, 1.485] | 2 |\n"
    "| text | sequence_cnn | 0.5 | 50 | 0.001 | 0.650 [0.650, 0.650] | 2 |\n"
    "| text | sequence_cnn | 1 | 100 | 0.001 | 0.700 [0.700, 0.700] | 2 |\n"
    "\n"
    "| modality | baseline | transformer matches or beats it from fraction |\n"
    "|---|---|---|\n"
    "| text | sequence_cnn | 1 |\n"
    "\n"
    "| modality | fraction | train examples | best baseline (by val) | "
    "transformer − baseline, pts [95%] | self-pretrained − baseline, pts [95%] |\n"
    "|---|---|---|---|---|---|\n"
    "| text | 0.5 | 50 | sequence_cnn | -5.0 [-132.1, +122.1] | — |\n"
    "| text | 1 | 100 | sequence_cnn | +15.0 [-48.5, +78.5] | — |\n"
    "\n"
    "| modality | arm | gap slope, pts per decade of data [95%] | paired gaps |\n"
    "|---|---|---|---|\n"
    "| text | transformer | +66.4 [-93.4, +226.2] | 4 |\n"
)


def _hand_log(tmp_path: Path) -> RunLog:
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in HAND_RUNS))
    return RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)


def test_report_from_hand_written_runs_gives_the_exact_table(tmp_path: Path) -> None:
    points = summarise(_hand_log(tmp_path), ["text"], SWEEPS["smoke"])
    assert markdown_table(points) == EXPECTED_TABLE


def test_main_writes_json_table_and_plot_from_the_log_without_training(tmp_path: Path) -> None:
    _hand_log(tmp_path)
    trained: list[object] = []
    benchmark = replace(load_script().BENCHMARK, run=lambda *args, **kwargs: trained.append(kwargs))
    assert sweep_main.main(benchmark, None, ["--smoke", "--modalities", "text", "--out", str(tmp_path)]) == 0
    assert trained == [{"lane": Lane()}]
    assert (tmp_path / "learning_curves.md").read_text() == EXPECTED_TABLE
    points = json.loads((tmp_path / "learning_curves.json").read_text())
    assert [(p["arm"], p["fraction"], p["test_mean"]) for p in points] == [
        ("small", 0.5, pytest.approx(0.6)), ("small", 1.0, pytest.approx(0.85)),
        ("sequence_cnn", 0.5, pytest.approx(0.65)), ("sequence_cnn", 1.0, pytest.approx(0.7)),
    ]  # fmt: skip
    assert (tmp_path / "learning_curve_text.png").read_bytes()[:4] == b"\x89PNG"


def test_crossover_is_the_fraction_from_which_the_transformer_stays_ahead() -> None:
    def pts(ours: list[float], theirs: list[float]) -> list[Point]:
        fractions = [0.1, 0.3, 1.0]
        return [
            Point(
                modality="m", arm=arm, fraction=f, train_examples=1, lr=1e-3, test_mean=a, test_std=0, seeds=1
            )
            for arm, accs in (("small", ours), ("cnn", theirs))
            for f, a in zip(fractions, accs, strict=True)
        ]

    assert crossover(pts([0.5, 0.7, 0.9], [0.6, 0.7, 0.8]), "m", "cnn") == 0.3
    assert crossover(pts([0.5, 0.8, 0.7], [0.6, 0.7, 0.8]), "m", "cnn") is None
    assert crossover(pts([0.9, 0.9, 0.9], [0.6, 0.7, 0.8]), "m", "cnn") == 0.1


@pytest.mark.slow
def test_smoke_sweep_writes_outputs_and_resumes(cache_dir: Path, tmp_path: Path) -> None:
    # One seed of the smoke grid: what this checks (files, fractions, resuming) needs no second seed, and
    # each run is mostly start-up (8 s), so the second seed doubled the test's time for nothing.
    one_seed = {**SWEEPS, "smoke": replace(SWEEPS["smoke"], seeds=(0,))}
    benchmark = replace(load_script().BENCHMARK, modes=one_seed)
    argv = ["--smoke", "--modalities", "text", "--out", str(tmp_path)]
    assert sweep_main.main(benchmark, None, argv) == 0
    runs = (tmp_path / "runs.jsonl").read_text().splitlines()
    assert len(runs) == 4  # 2 arms × 2 fractions × 1 rate × 1 seed
    by_fraction = {(r["arm"], r["fraction"]): r["train_examples"] for r in map(json.loads, runs)}
    assert by_fraction[("small", 0.5)] < by_fraction[("small", 1.0)], "a fraction trains on fewer examples"
    assert "| text | small |" in (tmp_path / "learning_curves.md").read_text()
    assert sweep_main.main(benchmark, None, argv) == 0
    assert (tmp_path / "runs.jsonl").read_text().splitlines() == runs, "a finished sweep reruns nothing"


def test_a_lane_trains_its_share_and_leaves_the_report_to_a_call_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _hand_log(tmp_path)
    lanes: list[object] = []
    benchmark = replace(load_script().BENCHMARK, run=lambda *args, lane: lanes.append(lane))
    argv = ["--smoke", "--modalities", "text", "--out", str(tmp_path)]
    assert sweep_main.main(benchmark, None, [*argv, "--lane", "1/2"]) == 0
    assert lanes == [Lane(1, 2)] and not (tmp_path / "learning_curves.md").exists()
    assert "rerun without --lane" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        sweep_main.main(benchmark, None, [*argv, "--lane", "2/2"])
    assert "lane 2/2: give INDEX/COUNT with 0 <= INDEX < COUNT" in capsys.readouterr().err
    assert sweep_main.main(benchmark, None, [*argv, "--report-only"]) == 0
    assert lanes == [Lane(1, 2)], "--report-only trains nothing"
    assert (tmp_path / "learning_curves.md").read_text() == EXPECTED_TABLE
