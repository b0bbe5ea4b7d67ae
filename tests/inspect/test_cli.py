"""`tabrasa inspect` end to end on tiny runs: a checkpoint in, PNGs and numbers out; bad input refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import PIL.Image
import pytest

from tabrasa.cli import main
from tabrasa.training import save_checkpoint
from tabrasa.training.lightning_cli import build_cli

BACKBONE = """\
    backbone:
      class_path: tabrasa.backbone.Encoder
      init_args:
        config: {dim: 32, depth: 2, heads: 4, max_len: 64}
"""


def _image_run(root: Path) -> tuple[Path, Path]:
    """A tiny image-folder run: a config and a checkpoint of its (untrained) weights."""
    for label in ("a", "b"):
        (root / "images" / label).mkdir(parents=True)
        for i in range(3):
            pixels = np.random.default_rng(i).integers(0, 255, (16, 16), dtype=np.uint8)
            PIL.Image.fromarray(pixels).save(root / "images" / label / f"{i}.png")
    config = root / "image.yaml"
    config.write_text(
        "model:\n  class_path: tabrasa.tasks.Classifier\n  init_args:\n" + BACKBONE + "    pooling: cls\n"
        "data:\n  class_path: tabrasa.data.ImageFolderDataModule\n  init_args:\n"
        f"    root: {root / 'images'}\n    tokenizer:\n      class_path: tabrasa.tokenizers.ImageTokenizer\n"
        "      init_args: {patch_size: 4, channels: 1, image_size: 16}\n"
    )
    return config, _checkpoint(config, root)


def _text_run(root: Path) -> tuple[Path, Path]:
    csv = root / "text.csv"
    rows = [f"{'good' if i % 2 else 'bad'} film number {i},{i % 2}" for i in range(20)]
    csv.write_text("text,label\n" + "\n".join(rows) + "\n")
    config = root / "text.yaml"
    config.write_text(
        "model:\n  class_path: tabrasa.tasks.Classifier\n  init_args:\n" + BACKBONE +
        f"data:\n  class_path: tabrasa.data.TextFileDataModule\n  init_args:\n    train_path: {csv}\n"
        "    tokenizer:\n      class_path: tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer\n"
        "      init_args: {vocab_size: 100, max_length: 32}\n"
    )  # fmt: skip
    return config, _checkpoint(config, root)


def _checkpoint(config: Path, root: Path) -> Path:
    cli = build_cli(
        ["fit", "--config", str(config), "--trainer.logger", "false"], run=False, save_config=False
    )
    path = root / "model.ckpt"
    save_checkpoint({"state_dict": cli.model.state_dict()}, path)
    return path


@pytest.fixture
def image_run(tmp_path: Path, cache_dir: Path) -> tuple[Path, Path]:
    return _image_run(tmp_path)


@pytest.mark.slow
def test_image_run_writes_rollout_and_locality(tmp_path: Path, image_run: tuple[Path, Path]) -> None:
    config, ckpt = image_run
    out = tmp_path / "out"
    image = tmp_path / "images" / "a" / "0.png"
    assert main(["inspect", "--config", str(config), "--ckpt_path", str(ckpt), "--input", str(image),
                 "--out", str(out)]) == 0  # fmt: skip
    for name in ("rollout.png", "locality.png", "attention.npz", "summary.json"):
        assert (out / name).stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["modality"] == "image" and summary["distance_unit"] == "pixels"
    assert np.array(summary["mean_attention_distance"]).shape == (2, 4)
    weights = np.load(out / "attention.npz")
    assert weights["layer_1"].shape == (4, 17, 17)  # CLS + 4×4 patches
    np.testing.assert_allclose(weights["layer_2"].sum(axis=-1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_text_run_writes_labelled_heatmaps(tmp_path: Path, cache_dir: Path) -> None:
    config, ckpt = _text_run(tmp_path)
    out = tmp_path / "out"
    assert main(["inspect", "--config", str(config), "--ckpt_path", str(ckpt), "--input", "good film",
                 "--out", str(out)]) == 0  # fmt: skip
    assert (out / "attention_tokens.png").stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tokens"] == ["[CLS]", "good", "film", "[SEP]"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make_input", "message"),
    [
        (lambda root: "the apple phone", "is not a file; this model reads image"),
        (lambda root: str(_touch(root / "empty.png")), "is empty"),
        (lambda root: str(root / "images"), "is a folder"),
        (lambda root: str(_write(root / "notes.txt", "hello")), "is a .txt file, but this model reads image"),
    ],
)
def test_bad_inputs_are_one_line_errors(
    tmp_path: Path, image_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str], make_input, message: str
) -> None:
    config, ckpt = image_run
    code = main(["inspect", "--config", str(config), "--ckpt_path", str(ckpt), "--input",
                 make_input(tmp_path), "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 2
    assert message in capsys.readouterr().err


def test_missing_checkpoint_and_checkpoint_without_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["inspect", "--input", "x", "--out", str(tmp_path / "out")]
    assert main([*args, "--ckpt_path", str(tmp_path / "missing.ckpt")]) == 2
    assert "missing.ckpt does not exist" in capsys.readouterr().err
    lone = tmp_path / "run" / "checkpoints" / "last.ckpt"
    lone.parent.mkdir(parents=True)
    save_checkpoint({"state_dict": {}}, lone)
    assert main([*args, "--ckpt_path", str(lone)]) == 2
    err = capsys.readouterr().err
    assert "has no config.yaml beside it" in err and "pass the run's config with --config" in err


def test_no_model_or_two_models_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--input", "x", "--out", str(tmp_path)]) == 2
    assert "needs a model" in capsys.readouterr().err


def _touch(path: Path) -> Path:
    path.touch()
    return path


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
