"""The mixers as drop-in backbones of a real run: `tabrasa fit` trains one, the checkpoint rebuilds the same
model (same predictions), inspection says plainly what it can show, and ONNX export works or refuses in
one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

from tabrasa.errors import UserError
from tabrasa.training.lightning_cli import build_cli
from tabrasa.training.rebuild import rebuild_run
from tabrasa.training.run_folder import locate_run

BACKBONES = {
    "mamba": {"class_path": "tabrasa.backbone.Mamba", "init_args": {"config": {"dim": 32, "depth": 1}}},
    "gau": {"class_path": "tabrasa.backbone.GAUEncoder",
            "init_args": {"config": {"dim": 32, "depth": 1, "qk_dim": 16, "max_len": 64}}},
    "ode": {"class_path": "tabrasa.backbone.ODEEncoder",
            "init_args": {"config": {"dim": 32, "heads": 2, "max_len": 64, "steps": 1}}},
}  # fmt: skip


@pytest.fixture(scope="module", params=sorted(BACKBONES))
def mixer_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    name = request.param
    root = tmp_path_factory.mktemp(name)
    data = root / "train.csv"
    rows = [("a good film, really good", "pos"), ("a bad film, really bad", "neg")] * 20
    data.write_text("text,label\n" + "".join(f'"{t}",{label}\n' for t, label in rows))
    config = {
        "seed_everything": 0,
        "trainer": {"max_epochs": 1, "enable_progress_bar": False, "enable_model_summary": False,
                    "logger": {"class_path": "pytorch_lightning.loggers.CSVLogger",
                               "init_args": {"save_dir": str(root / "runs"), "name": name}}},
        "model": {"class_path": "tabrasa.tasks.Classifier", "init_args": {"backbone": BACKBONES[name]}},
        "data": {"class_path": "tabrasa.data.TextFileDataModule", "init_args": {
            "train_path": str(data), "vocab_size": 60, "max_length": 32,
            "cache_dir": str(root / "cache"), "loader": {"batch_size": 8}}},
        "test_after_fit": False,
    }  # fmt: skip
    path = root / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    build_cli(["fit", "--config", str(path)])
    return name, root / "runs" / name / "version_0"


@pytest.mark.slow
def test_a_mixer_checkpoint_rebuilds_the_model_it_trained(mixer_run: tuple[str, Path]) -> None:
    name, run = mixer_run
    first = rebuild_run(*locate_run(run, "last")).model.eval()
    again = rebuild_run(*locate_run(run, "last")).model.eval()
    batch = first.tokenizer.collate([first.tokenizer.encode(t) for t in ("a good film", "a bad one")])
    with torch.no_grad():
        torch.testing.assert_close(first(batch), again(batch))
    assert type(first.backbone).__name__.lower().startswith(name[:3])


@pytest.mark.slow
def test_inspection_says_plainly_it_draws_attention_maps_only(mixer_run: tuple[str, Path]) -> None:
    from tabrasa.inspect.source import from_run

    _, run = mixer_run
    config, checkpoint = locate_run(run, "last")
    with pytest.raises(UserError, match="has no attention to inspect") as refused:
        from_run(config, checkpoint)
    assert "\n" not in str(refused.value)


@pytest.mark.slow
def test_onnx_export_works_or_refuses_in_one_line(mixer_run: tuple[str, Path], tmp_path: Path) -> None:
    from tabrasa.cli.export import export_main

    _, run = mixer_run
    try:
        code = export_main(["--run", str(run), "--ckpt", "last", "--format", "onnx", "--out", str(tmp_path)])
    except UserError as refused:
        assert "\n" not in str(refused) and "ONNX" in str(refused)
    else:
        assert code == 0 and (tmp_path / "model.onnx").exists()
