"""The command line: every shipped config builds and trains a step, `fit` tests the checkpoint it says it
tests, and a user's mistake ends the command with one line and exit status 2."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tabrasa.backbone import Encoder, SequenceCNN, SequenceLSTM
from tabrasa.cli.main import main
from tabrasa.training import ResumeCheckpoint, best_checkpoint_callback, load_checkpoint
from tabrasa.training.lightning_cli import build_cli

ROOT = Path(__file__).resolve().parents[1]
# Every shipped config that names a model and its data (configs/distill/ layers on a task config).
TASK_CONFIGS = sorted(
    p
    for p in (ROOT / "configs").rglob("*.yaml")
    if {"model", "data"} <= set(yaml.safe_load(p.read_text()) or {})
)


def tiny_data(config: Path, folder: Path) -> list[str]:
    """16 examples per split, in the main process (a joint config passes limit on to every task, an
    unlabelled view takes it on its source), and anything a run exports goes under `folder`."""
    settings = yaml.safe_load(config.read_text())
    data = settings["data"]
    export = settings["model"].get("init_args", {}).get("export_dir")
    exported = ["--model.init_args.export_dir", str(folder / "export")] if export else []
    if data["class_path"].endswith("JointDataModule"):
        return ["--data.limit", "16", *exported]
    limit = "--data.init_args.source.init_args.limit" if "source" in data["init_args"] else "--data.limit"
    return [limit, "16", "--data.loader.num_workers", "0", *exported]


def cli_env(cache_dir: Path) -> dict[str, str]:
    return {**os.environ, "TABRASA_CACHE": str(cache_dir)}


def tabrasa(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabrasa.cli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_configs_exist() -> None:
    assert ROOT / "configs" / "text" / "imdb.yaml" in TASK_CONFIGS


def budget_problem(trainer: dict) -> str | None:
    """What is wrong with a trainer section's training budget and validation schedule, or None.

    Three budgets are shipped, and each must validate the weights it ends with:
    - epochs (max_epochs, no max_steps): validated at each epoch's end, or at fractions of it;
    - steps across epochs (max_steps, no max_epochs): an integer val_check_interval counts steps across
      epochs only with check_val_every_n_epoch: null, else Lightning refuses one longer than an epoch
      (configs/pretrain/audio.yaml and image.yaml did: 125 and 453 batches an epoch < 500);
    - steps within one epoch (max_steps with max_epochs: 1).
    A step budget validates on a multiple of val_check_interval, so that must divide max_steps. The smoke
    run below, with fast_dev_run, cannot see any of this."""
    steps, epochs = trainer.get("max_steps"), trainer.get("max_epochs")
    interval = trainer.get("val_check_interval")
    if steps is None:
        if epochs is None:
            return "no max_epochs or max_steps: Lightning would train for 1000 epochs"
        if interval is not None and not (isinstance(interval, float) and 0 < interval <= 1):
            return f"an epoch budget with val_check_interval {interval}: give a fraction of an epoch"
        return None
    if epochs not in (None, 1):
        return f"max_steps {steps} and max_epochs {epochs}: which one ends the run is unclear"
    if not isinstance(interval, int) or steps % interval:
        return f"val_check_interval {interval} does not divide max_steps {steps}: the end goes unvalidated"
    if epochs is None and interval > 1 and trainer.get("check_val_every_n_epoch", 1) is not None:
        return f"val_check_interval {interval} steps across epochs needs check_val_every_n_epoch: null"
    return None


@pytest.mark.parametrize("config", TASK_CONFIGS, ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_every_budget_validates_the_weights_it_ends_with(config: Path) -> None:
    trainer = yaml.safe_load(config.read_text()).get("trainer", {})
    assert budget_problem(trainer) is None, f"{config.relative_to(ROOT)}: {budget_problem(trainer)}"


def test_every_task_config_is_checked() -> None:
    """The configs are found by what they hold, not listed here, so a new one cannot be missed; this keeps
    the search itself from finding nothing (every modality's folder contributes)."""
    folders = {p.parent.name for p in TASK_CONFIGS}
    assert {"audio", "image", "joint", "pretrain", "protein", "text"} <= folders


@pytest.mark.parametrize(
    ("trainer", "problem"),
    [
        ({"max_steps": 1500, "val_check_interval": 500}, "check_val_every_n_epoch: null"),
        ({"max_steps": 250, "max_epochs": 1, "val_check_interval": 100}, "does not divide"),
        ({"max_steps": 250, "max_epochs": 1}, "does not divide"),
        ({"max_steps": 600, "max_epochs": 3, "val_check_interval": 200}, "unclear"),
        ({"max_epochs": 3, "val_check_interval": 200}, "fraction of an epoch"),
        ({}, "1000 epochs"),
    ],
)
def test_a_budget_that_skips_validation_is_caught(trainer: dict, problem: str) -> None:
    """Counter-test: the mistakes above (the first is what pretrain/audio.yaml shipped) are each reported."""
    found = budget_problem(trainer)
    assert found is not None and problem in found


@pytest.mark.slow
@pytest.mark.parametrize("config", TASK_CONFIGS, ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_every_config_trains_a_step_on_tiny_data(config: Path, cache_dir: Path, tmp_path: Path) -> None:
    cli = build_cli(
        [
            "fit",
            "--config", str(config),
            "--trainer.fast_dev_run", "true",
            "--trainer.enable_progress_bar", "false",
            "--trainer.default_root_dir", str(tmp_path),
            *tiny_data(config, tmp_path),
        ],
        save_config=False,
    )  # fmt: skip
    expected = yaml.safe_load(config.read_text())["model"]["class_path"].rsplit(".", 1)[-1]
    assert type(cli.model).__name__ == expected
    loss = float(cli.trainer.callback_metrics["train/loss"])
    assert math.isfinite(loss) and loss > 0


@pytest.mark.slow
def test_fit_tests_the_best_checkpoint_by_validation_accuracy(cache_dir: Path, tmp_path: Path) -> None:
    """The bug: `trainer.checkpoint_callback` is the first ModelCheckpoint, the writer of last.ckpt, so
    `fit` tested the last weights while saying "best". Now the monitored callback's file is tested."""
    cli = build_cli(
        [
            "fit",
            "--config", str(ROOT / "configs" / "text" / "imdb.yaml"),
            "--data.limit", "64",
            "--data.loader.batch_size", "16",
            "--trainer.max_epochs", "3",
            "--trainer.logger.init_args.save_dir", str(tmp_path),
            "--trainer.enable_progress_bar", "false",
        ],
        save_config=False,
    )  # fmt: skip
    trainer = cli.trainer
    assert isinstance(trainer.checkpoint_callback, ResumeCheckpoint)  # what the old code read
    best = best_checkpoint_callback(trainer)
    assert best is not None and best.monitor == "val/acc" and best.mode == "max"
    assert trainer.ckpt_path == best.best_model_path and Path(best.best_model_path).name.startswith("best-")
    # The tested weights are the best file's, not the last epoch's (they differ after 3 epochs).
    saved = load_checkpoint(best.best_model_path)["state_dict"]
    last = load_checkpoint(Path(best.best_model_path).with_name("last.ckpt"))["state_dict"]
    tested = cli.model.state_dict()
    key = "head.fc.weight"
    assert (tested[key] == saved[key]).all()
    if best.best_model_path and int(saved["head.fc.weight"].sum() != last["head.fc.weight"].sum()):
        assert not (tested[key] == last[key]).all()


@pytest.mark.slow
def test_fit_test_predict_end_to_end(
    cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = [
        "--config", str(ROOT / "configs" / "text" / "imdb.yaml"),
        "--data.limit", "48",
        "--data.loader.batch_size", "16",
        "--trainer.logger.init_args.save_dir", str(tmp_path),
        "--trainer.enable_progress_bar", "false",
    ]  # fmt: skip
    env = cli_env(cache_dir)
    fit = tabrasa(["fit", *common, "--trainer.max_epochs", "1"], tmp_path, env)
    assert fit.returncode == 0, fit.stderr[-3000:]
    assert "Testing the best checkpoint by val/acc" in fit.stdout + fit.stderr
    checkpoints = sorted((tmp_path / "imdb").glob("version_*/checkpoints/*.ckpt"))
    assert {p.name for p in checkpoints} >= {"last.ckpt"}, checkpoints
    assert any(p.name.startswith("best-") for p in checkpoints)
    assert (tmp_path / "imdb" / "version_0" / "metrics.csv").exists()
    card = json.loads((tmp_path / "imdb" / "version_0" / "run_card.json").read_text())
    assert card["tested_checkpoint"] and Path(card["tested_checkpoint"]).name.startswith("best-")
    assert card["selected_on"]["metric"] == "val/acc" and 0.0 <= card["test"]["test/acc"] <= 1.0
    assert card["data"]["split_sizes"] == {"train": 48, "validation": 48, "test": 48}
    fingerprints = card["data"]["fingerprints"]  # the datasets hash of each split's table
    assert set(fingerprints) == {"train", "validation", "test"} and len(set(fingerprints.values())) == 3
    assert all(isinstance(f, str) and len(f) >= 16 for f in fingerprints.values())
    assert card["git"]["commit"] is None or len(card["git"]["commit"]) == 40
    # The run's CPU time (this process and its finished children) fits in cores × wall, plus slack.
    assert 0 < card["fit_cpu_seconds"] <= card["hardware"]["cpus"] * card["fit_seconds"] + 30
    # Not resumed: the final test's checkpoint is not mistaken for a resume point.
    assert card["segments"] == {
        "count": 1,
        "this_process_fit_seconds": card["fit_seconds"],
        "resumed_from": None,
    }
    # `test` and `predict` run in this process: the command's entry point was started as a process above, and
    # each further start would cost the suite a Lightning import (11-13 s on a loaded core).
    assert main(["test", *common, "--ckpt_path", str(checkpoints[-1])]) == 0
    tested = capsys.readouterr().out
    assert "test/acc" in tested and "test/f1" in tested
    assert main(["predict", *common, "--ckpt_path", str(checkpoints[-1])]) == 0


def test_print_config_shows_linked_model_and_data(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as printed:  # jsonargparse exits 0 once the config is printed
        main(["fit", "--config", str(ROOT / "configs" / "text" / "imdb.yaml"), "--print_config"])
    assert printed.value.code == 0
    config = yaml.safe_load(capsys.readouterr().out)
    assert config["model"]["init_args"]["backbone"]["init_args"]["config"]["dim"] == 128
    assert config["data"]["class_path"] == "tabrasa.data.IMDBDataModule"


@pytest.mark.parametrize(
    ("baseline", "kind"), [("sequence_cnn", SequenceCNN), ("sequence_lstm", SequenceLSTM), ("small", Encoder)]
)
def test_a_baseline_backbone_swaps_in_from_yaml(
    baseline: str, kind: type, cache_dir: Path, tmp_path: Path
) -> None:
    cli = build_cli(
        [
            "fit",
            "--config", str(ROOT / "configs" / "text" / "imdb.yaml"),
            "--model.init_args.backbone", str(ROOT / "configs" / "backbone" / f"{baseline}.yaml"),
            "--trainer.default_root_dir", str(tmp_path),
            "--data.limit", "16",
        ],
        run=False,
        save_config=False,
    )  # fmt: skip
    assert type(cli.model.backbone) is kind


def one_line_error(code: int, stderr: str) -> str:
    """The message of a user's mistake as the command prints it: exit status 2, one `tabrasa: error:` line
    and a hint, no traceback."""
    assert code == 2, stderr[-2000:]
    assert "Traceback" not in stderr and "usage:" not in stderr  # not the parser's whole usage text
    errors = [line for line in stderr.splitlines() if line.startswith("tabrasa: error:")]
    assert len(errors) == 1, stderr[-2000:]
    return errors[0]


# The mistakes below run `main` in this process: what `python -m tabrasa.cli` adds is `sys.exit(main())`,
# and each started process would cost a Lightning import (11-13 s on a loaded core). A mistake in a started
# process is tests/training/test_sharding.py's FSDP refusal.
def test_a_single_class_csv_is_one_line_and_exit_status_2(
    cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "one_class.csv"
    data.write_text("text,label\n" + "".join(f"review number {i},good\n" for i in range(30)))
    args = [
        "fit",
        "--config", str(ROOT / "configs" / "text" / "imdb.yaml"),
        "--data", str(ROOT / "configs" / "user" / "text_csv.yaml"),
        "--data.train_path", str(data),
        "--trainer.default_root_dir", str(tmp_path),
        "--trainer.logger", "false",
    ]  # fmt: skip
    monkeypatch.delenv("TABRASA_TRACEBACK", raising=False)
    assert "at least 2 classes" in one_line_error(main(args), capsys.readouterr().err)
    monkeypatch.setenv("TABRASA_TRACEBACK", "1")
    with pytest.raises(Exception, match="at least 2 classes"):  # the traceback, for whoever asked for it
        main(args)


def test_a_bad_setting_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TABRASA_TRACEBACK", raising=False)
    # 16 reviews: the model, where the setting is checked, is built after a vocabulary is trained.
    code = main(
        ["fit", "--config", str(ROOT / "configs" / "text" / "imdb.yaml"),
         "--model.init_args.optimizer.warmup_fraction", "1.5", "--trainer.logger", "false",
         "--trainer.default_root_dir", str(tmp_path), "--data.limit", "16"]
    )  # fmt: skip
    assert "warmup_fraction=1.5" in one_line_error(code, capsys.readouterr().err)
