"""The mixers as drop-in backbones of a real run: `tabrasa fit` trains one, the checkpoint rebuilds the same
model (same predictions), inspection says plainly what it can show, and ONNX export works or refuses in
one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tabrasa.errors import UserError
from tabrasa.training.rebuild import rebuild_run
from tabrasa.training.run_folder import locate_run
from tests.deploy.conftest import fit_text_run

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
    return name, fit_text_run(tmp_path_factory.mktemp(name), name, BACKBONES[name], max_epochs=1)


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
