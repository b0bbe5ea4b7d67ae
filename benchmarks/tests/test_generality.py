"""The cost-of-generality benchmark: each arm's command, its rate from the curves (by validation), the
interleaved order, the table from hand-written runs, and one real run end to end."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks.evidence import generality
from benchmarks.evidence.arms import SWEEPS
from benchmarks.evidence.generality import (
    KEY_FIELDS,
    GeneralityKey,
    check_step_cap,
    chosen_rates,
    command,
    full_data_points,
    generality_table,
    run_generality,
    summarise_generality,
)
from benchmarks.evidence.learning_curves import KEY_FIELDS as CURVE_FIELDS
from benchmarks.evidence.rate_sweep import RunLog

ROOT = Path(__file__).resolve().parents[2]
RUN_FIELDS = {"train_examples": 100, "train_seconds": 1.0}  # what every logged curve run also carries


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_generality", ROOT / "benchmarks" / "bench_generality.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_command_swaps_only_backbone_seed_and_rate() -> None:
    args = command(ROOT, GeneralityKey(modality="image", arm="grid_cnn", seed=1), 3e-3, Path("/tmp/x"))
    pairs = dict(zip(args[1::2], args[2::2], strict=True))
    assert args[0] == "fit" and pairs["--config"] == "configs/image/fashion_mnist.yaml"
    assert pairs["--model.init_args.backbone"].endswith("configs/backbone/patch_grid_cnn.yaml")
    assert pairs["--seed_everything"] == "1" and pairs["--model.init_args.optimizer.lr"] == "0.003"
    assert "--model.init_args.optimizer.lr" not in command(ROOT, GeneralityKey(modality="image", arm="small",
                                                           seed=0), None, Path("/tmp/x"))  # fmt: skip


def test_a_step_cap_trains_that_many_steps_and_validates_the_last() -> None:
    key = GeneralityKey(modality="protein", arm="small", seed=0)
    args = command(ROOT, key, None, Path("/tmp/x"), max_steps=1000)
    pairs = dict(zip(args[1::2], args[2::2], strict=True))
    assert pairs["--trainer.max_steps"] == "1000" and pairs["--trainer.max_epochs"] == "-1"
    assert (
        pairs["--trainer.val_check_interval"] == "250"
        and pairs["--trainer.check_val_every_n_epoch"] == "null"
    )
    assert "--trainer.max_steps" not in command(ROOT, key, None, Path("/tmp/x")), (
        "no cap: the config's epochs"
    )
    with pytest.raises(ValueError, match=r"max_steps=1001: give a multiple of 4"):
        command(ROOT, key, None, Path("/tmp/x"), max_steps=1001)


def test_a_log_refuses_runs_at_another_step_cap(tmp_path: Path) -> None:
    log = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)
    check_step_cap(log, None)  # an empty log takes any cap
    log.add({**fake_run(GeneralityKey(modality="image", arm="small", seed=0), 0.8, 1.0), "max_steps": 1000})
    check_step_cap(log, 1000)
    for other in (None, 500):
        with pytest.raises(ValueError, match=r"runs at max_steps \[1000\], not .*resume it --max-steps 1000"):
            check_step_cap(log, other)
    with pytest.raises(ValueError, match="one table compares one budget"):
        run_generality(ROOT, ["image"], log, None, SWEEPS["standard"], max_steps=500)


def test_rates_come_from_the_curves_validation_at_full_data(tmp_path: Path) -> None:
    sweep = SWEEPS["standard"]
    curves = RunLog(tmp_path / "runs.jsonl", CURVE_FIELDS)
    for lr, val, test in ((1e-3, 0.9, 0.1), (3e-3, 0.8, 0.99), (1e-2, 0.7, 0.99)):  # test disagrees
        curves.add({"modality": "image", "arm": "grid_cnn", "fraction": 1.0, "lr": lr, "seed": 0,
                    "val_acc": val, "test_acc": test, **RUN_FIELDS})  # fmt: skip
    # 1e-3 is the list's lower edge: the bracketing rate below it ran worse.
    curves.add({"modality": "image", "arm": "grid_cnn", "fraction": 1.0, "lr": 1e-3 / 3, "seed": 0,
                "val_acc": 0.5, "test_acc": 0.99, **RUN_FIELDS})  # fmt: skip
    points = full_data_points(curves, sweep, "image")
    assert chosen_rates(points, "image") == {"grid_cnn": 1e-3}, "small has not run: config's rate"


def test_curves_replay_under_the_bracket_of_the_sweep_that_wrote_them(tmp_path: Path) -> None:
    curves = RunLog(tmp_path / "runs.jsonl", CURVE_FIELDS)
    for lr, val in ((1e-3, 0.5), (3e-3, 0.6), (9e-3, 0.7), (2.7e-2, 0.8)):  # best at the top after two
        curves.add({"modality": "audio", "arm": "grid_cnn", "fraction": 1.0, "lr": lr, "seed": 0,
                    "val_acc": val, "test_acc": val, **RUN_FIELDS})  # fmt: skip
    for seed in (1, 2):
        curves.add({"modality": "audio", "arm": "grid_cnn", "fraction": 1.0, "lr": 2.7e-2, "seed": seed,
                    "val_acc": 0.8, "test_acc": 0.8, **RUN_FIELDS})  # fmt: skip
    assert SWEEPS["wide"].bracket == 2 < SWEEPS["standard"].bracket
    assert chosen_rates(full_data_points(curves, SWEEPS["wide"], "audio"), "audio") == {
        "grid_cnn": pytest.approx(2.7e-2)
    }
    assert chosen_rates(full_data_points(curves, SWEEPS["standard"], "audio"), "audio") == {}, (
        "a third extension is owed under the standard bracket: the point has not finished"
    )


def test_curves_from_an_unnamed_folder_need_their_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "my_curves"
    folder.mkdir()
    (folder / "runs.jsonl").write_text("")
    with pytest.raises(SystemExit):
        load_script().main(["--curves", str(folder), "--out", str(tmp_path / "out")])
    assert "name the sweep that wrote it, --curves-sweep (" in capsys.readouterr().err


def test_with_curves_only_the_baseline_validation_prefers_runs(tmp_path: Path) -> None:
    sweep = replace(SWEEPS["standard"], seeds=(0,), bracket=0)
    curves = RunLog(tmp_path / "runs.jsonl", CURVE_FIELDS)
    assert generality.arms_to_run([], "text") == ("small", "sequence_cnn", "sequence_lstm")
    # validation prefers the LSTM, test the CNN: the LSTM runs
    for arm, val, test in (("sequence_cnn", 0.70, 0.95), ("sequence_lstm", 0.80, 0.60)):
        for lr in sweep.learning_rates:
            curves.add({"modality": "text", "arm": arm, "fraction": 1.0, "lr": lr, "seed": 0,
                        "val_acc": val if lr == 1e-3 else val - 0.1, "test_acc": test,
                        **RUN_FIELDS})  # fmt: skip
        if arm == "sequence_cnn":
            points = full_data_points(curves, sweep, "text")
            assert generality.arms_to_run(points, "text") == ("small", "sequence_cnn", "sequence_lstm")
    assert generality.arms_to_run(full_data_points(curves, sweep, "text"), "text") == (
        "small",
        "sequence_lstm",
    )
    image = full_data_points(curves, sweep, "image")
    assert generality.arms_to_run(image, "image") == ("small", "grid_cnn"), "one baseline: itself"


def fake_run(key: GeneralityKey, acc: float, seconds: float) -> dict[str, Any]:
    return {**key.__dict__, "lr": None, "lr_source": "config", "test_acc": acc, "test_f1": acc,
            "val_acc": acc, "fit_seconds": seconds, "global_step": 100}  # fmt: skip


def test_runs_interleave_arms_within_a_seed_and_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[tuple[str, int]] = []

    def run_one(
        root: Path, key: GeneralityKey, lr: float | None, extra: list[str], max_steps: int | None
    ) -> dict[str, Any]:
        order.append((key.arm, key.seed))
        return fake_run(key, 0.5, 1.0)

    monkeypatch.setattr(generality, "run_one", run_one)
    log = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)
    run_generality(ROOT, ["text"], log, None, SWEEPS["standard"])
    assert order == [("small", 0), ("sequence_cnn", 0), ("sequence_lstm", 0),
                     ("small", 1), ("sequence_cnn", 1), ("sequence_lstm", 1)]  # fmt: skip
    run_generality(ROOT, ["text"], RunLog(tmp_path / "runs.jsonl", KEY_FIELDS), None, SWEEPS["standard"])
    assert len(order) == 6, "a finished benchmark reruns nothing"


def test_the_table_compares_the_transformer_with_the_baseline_validation_prefers(tmp_path: Path) -> None:
    log = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)
    for seed, (ours, cnn, lstm) in enumerate(((0.80, 0.86, 0.84), (0.82, 0.88, 0.84))):
        log.add(fake_run(GeneralityKey(modality="protein", arm="small", seed=seed), ours, 600.0))
        log.add(fake_run(GeneralityKey(modality="protein", arm="sequence_cnn", seed=seed), cnn, 200.0))
        log.add(fake_run(GeneralityKey(modality="protein", arm="sequence_lstm", seed=seed), lstm, 300.0))
    table = generality_table(summarise_generality(log, ["protein"]))
    assert (
        "| protein | `configs/protein/psortb.yaml` | small | 0.810 [0.683, 0.937] | 2 | 600 | 100 |" in table
    )
    assert table.endswith("| protein | sequence_cnn | -6.0 | 3.00× |\n")


@pytest.mark.slow
def test_one_real_pair_of_runs_writes_the_table(tmp_path: Path) -> None:
    script = load_script()
    argv = ["--modalities", "image", "--seeds", "0", "--out", str(tmp_path), "--max-steps", "4"]
    assert script.main([*argv, "--extra", "--data.init_args.limit", "64"]) == 0
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [r["arm"] for r in runs] == ["small", "grid_cnn"]
    assert all(r["global_step"] == 4 and r["max_steps"] == 4 and 0.0 <= r["test_acc"] <= 1.0 for r in runs)
    assert runs[1]["card"]["git"]["commit"], "the whole run card is kept"
    assert "| image | grid_cnn |" in (tmp_path / "generality.md").read_text()
