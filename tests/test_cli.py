"""The command line: every shipped config parses and runs on tiny data, and fit → test → predict works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tabrasa.cli import main

ROOT = Path(__file__).resolve().parents[1]
TASK_CONFIGS = sorted(
    p for p in (ROOT / "configs").rglob("*.yaml") if "model" in (yaml.safe_load(p.read_text()) or {})
)


def test_configs_exist() -> None:
    assert ROOT / "configs" / "text" / "imdb.yaml" in TASK_CONFIGS


@pytest.mark.parametrize("config", TASK_CONFIGS, ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_every_config_runs_one_step_on_tiny_data(config: Path, cache_dir: Path, tmp_path: Path) -> None:
    main(
        [
            "fit",
            "--config", str(config),
            "--trainer.fast_dev_run", "true",
            "--trainer.enable_progress_bar", "false",
            "--trainer.default_root_dir", str(tmp_path),
            "--data.limit", "16",
            "--data.num_workers", "0",
        ]
    )  # fmt: skip


@pytest.mark.slow
def test_fit_test_predict_end_to_end(cache_dir: Path, tmp_path: Path) -> None:
    common = [
        "--config", str(ROOT / "configs" / "text" / "imdb.yaml"),
        "--data.limit", "48",
        "--data.batch_size", "16",
        "--trainer.logger.init_args.save_dir", str(tmp_path),
        "--trainer.enable_progress_bar", "false",
    ]  # fmt: skip
    env = {**os.environ, "TABRASA_CACHE": str(cache_dir)}

    def tabrasa(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "tabrasa.cli", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout + out.stderr

    tabrasa("fit", *common, "--trainer.max_epochs", "1")
    checkpoints = sorted((tmp_path / "imdb").glob("version_*/checkpoints/*.ckpt"))
    assert {p.name for p in checkpoints} >= {"last.ckpt"}, checkpoints
    assert (tmp_path / "imdb" / "version_0" / "metrics.csv").exists()
    tested = tabrasa("test", *common, "--ckpt_path", str(checkpoints[-1]))
    assert "test/acc" in tested and "test/f1" in tested
    tabrasa("predict", *common, "--ckpt_path", str(checkpoints[-1]))


def test_print_config_shows_linked_model_and_data() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tabrasa.cli", "fit", "--config", "configs/text/imdb.yaml", "--print_config"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    config = yaml.safe_load(out)
    assert config["model"]["init_args"]["backbone"]["init_args"]["config"]["dim"] == 128
    assert config["data"]["class_path"] == "tabrasa.data.IMDBDataModule"


@pytest.mark.parametrize("baseline", ["sequence_cnn", "sequence_lstm"])
def test_a_baseline_backbone_swaps_in_from_yaml(baseline: str, cache_dir: Path, tmp_path: Path) -> None:
    main(
        [
            "fit",
            "--config", str(ROOT / "configs" / "text" / "imdb.yaml"),
            "--model.init_args.backbone", str(ROOT / "configs" / "backbone" / f"{baseline}.yaml"),
            "--trainer.fast_dev_run", "true",
            "--trainer.enable_progress_bar", "false",
            "--trainer.default_root_dir", str(tmp_path),
            "--data.limit", "16",
        ]
    )  # fmt: skip
