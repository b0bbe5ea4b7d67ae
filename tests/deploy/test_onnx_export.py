"""ONNX export: one graph, dynamic batch and length, equal to PyTorch (onnxruntime) on padded batches."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
import torch

from tabrasa.deploy.examples import example_raws
from tabrasa.deploy.modality import modality_of
from tabrasa.deploy.onnx_export import export_onnx
from tabrasa.deploy.parity import parity
from tabrasa.errors import UserError
from tests.deploy.conftest import tiny_run

TOLERANCE = 1e-4


@pytest.mark.parametrize(
    ("modality", "kind"),
    [("text", "full"), ("text", "lowrank"), ("protein", "full"), ("audio", "full"), ("image", "axial")],
)
def test_exported_graph_matches_pytorch_on_a_padded_batch(modality: str, kind: str, tmp_path: Path) -> None:
    run = tiny_run(modality, kind, tmp_path)
    exported = export_onnx(run, tmp_path / "export")
    assert parity(run, exported.path) <= TOLERANCE


def test_padding_in_the_graph_leaves_real_tokens_alone(tmp_path: Path) -> None:
    """A text padded to a longer batch gets the logits it gets alone: the graph's mask path is live."""
    run = tiny_run("text", "full", tmp_path)
    exported = export_onnx(run, tmp_path / "export")
    session = onnxruntime.InferenceSession(str(exported.path), providers=["CPUExecutionProvider"])
    tok = run.tokenizer
    alone = tok.collate([tok.encode("a good film")])
    padded = tok.collate([tok.encode("a good film"), tok.encode("the plot was bad and slow " * 3)])
    assert padded["attention_mask"][0].sum() < padded["attention_mask"].shape[1]
    run_graph = lambda b: session.run(["logits"], {n: b[n].numpy() for n in exported.input_names})[0]  # noqa: E731
    np.testing.assert_allclose(run_graph(padded)[0], run_graph(alone)[0], atol=TOLERANCE)


def test_graph_axes_are_dynamic_and_settings_are_written(tmp_path: Path) -> None:
    run = tiny_run("text", "full", tmp_path)
    exported = export_onnx(run, tmp_path / "export")
    assert not any(m.training for m in run.model.modules())  # export leaves the model in eval mode
    assert exported.input_names == ["input_ids", "attention_mask"]
    assert exported.dynamic_axes["input_ids"] == {0: "batch", 1: "length"}
    meta = json.loads((tmp_path / "export" / "tabrasa_export.json").read_text())
    assert meta["class_names"] == ["neg", "pos"] and meta["outputs"] == ["logits", "probabilities"]
    settings = json.loads((tmp_path / "export" / "tokenizer.json").read_text())
    assert settings["kind"] == "text" and settings["max_length"] == 32
    assert (tmp_path / "export" / settings["file"]).is_file()
    session = onnxruntime.InferenceSession(str(exported.path), providers=["CPUExecutionProvider"])
    shapes = {i.name: i.shape for i in session.get_inputs()}
    assert shapes["input_ids"] == ["batch", "length"]


def test_probabilities_output_is_the_softmax_of_the_logits(tmp_path: Path) -> None:
    run = tiny_run("protein", "full", tmp_path)
    exported = export_onnx(run, tmp_path / "export")
    session = onnxruntime.InferenceSession(str(exported.path), providers=["CPUExecutionProvider"])
    tok = run.tokenizer
    batch = tok.collate([tok.encode(r) for r in example_raws(tok, modality_of(tok), 3)])
    logits, probs = session.run(None, {n: batch[n].numpy() for n in exported.input_names})
    np.testing.assert_allclose(probs, torch.from_numpy(logits).softmax(-1).numpy(), atol=1e-6)


@pytest.mark.parametrize(("modality", "kind"), [("text", "local"), ("audio", "axial")])
def test_kinds_the_graph_cannot_express_are_refused(modality: str, kind: str, tmp_path: Path) -> None:
    run = tiny_run(modality, kind, tmp_path)
    with pytest.raises(UserError, match=f"kind '{kind}'"):
        export_onnx(run, tmp_path / "export")
    assert not (tmp_path / "export" / "model.onnx").exists()
