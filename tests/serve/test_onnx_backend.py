"""The ONNX backend: the exported graph answers with the PyTorch model's rows, an existing export of the
same checkpoint is reused, and an export of another model is refused rather than served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tabrasa.deploy.examples import example_raws
from tabrasa.deploy.predictor import Predictor
from tabrasa.deploy.run import TrainedRun
from tabrasa.errors import UserError
from tabrasa.serve.model import served_model
from tabrasa.serve.onnx_backend import OnnxModel, ensure_export
from tests.deploy.conftest import tiny_run

TEXTS = ["a good film", "the acting was good and the plot was bad", "bad"]


@pytest.mark.parametrize("modality", ["text", "image"])
def test_onnx_rows_match_the_pytorch_rows(modality: str, tmp_path: Path) -> None:
    run = tiny_run(modality, tmp=tmp_path)
    onnx = served_model({modality: run}, "tiny", onnx_dir=tmp_path / "onnx")
    torch_rows = served_model({modality: run}, "tiny").tasks[modality].predictor
    assert onnx.backend == "onnx" and onnx.parity[modality] < 1e-4
    raws = example_raws(run.tokenizer, modality, 3, seed=5)  # other sizes than the traced example
    for got, want in zip(onnx.tasks[modality].predictor.predict(raws), torch_rows.predict(raws), strict=True):
        assert got["prediction"] == want["prediction"]
        assert got["prob_pos"] == pytest.approx(want["prob_pos"], abs=1e-5)


def test_an_export_of_the_same_checkpoint_is_reused_and_another_refused(tmp_path: Path) -> None:
    run = tiny_run("text", tmp=tmp_path)
    folder = tmp_path / "onnx"
    graph, difference = ensure_export(run, folder)
    assert difference is not None and difference < 1e-4
    stamp = graph.stat().st_mtime_ns
    assert (
        ensure_export(run, folder) == (graph, None) and graph.stat().st_mtime_ns == stamp
    )  # not re-exported
    meta = json.loads((folder / "tabrasa_export.json").read_text())
    (folder / "tabrasa_export.json").write_text(json.dumps({**meta, "checkpoint": "/elsewhere/other.ckpt"}))
    with pytest.raises(UserError, match=r"holds an ONNX export of /elsewhere/other\.ckpt"):
        ensure_export(run, folder)


def test_a_graph_of_another_model_gives_other_rows(tmp_path: Path) -> None:
    """Counter-test: the row comparison above can fail; another model's graph answers differently."""
    run, other = tiny_run("text", tmp=tmp_path / "a"), tiny_run("text", tmp=tmp_path / "b")
    graph, _ = ensure_export(other, tmp_path / "onnx")
    wrong = TrainedRun(OnnxModel(graph, run.model.objective), run.tokenizer, run.class_names,
                       run.config_path, run.checkpoint_path)  # fmt: skip
    got, want = Predictor(wrong).predict(TEXTS), Predictor(run).predict(TEXTS)
    assert max(abs(g["prob_pos"] - w["prob_pos"]) for g, w in zip(got, want, strict=True)) > 1e-3
