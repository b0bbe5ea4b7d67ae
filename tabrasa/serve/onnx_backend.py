"""The ONNX backend: a run's exported graph run by ONNX Runtime behind the module interface the Predictor
calls (`model(batch)` → logits, `model.objective`), so both backends answer with the same rows.

The graph is the one `tabrasa export` writes (tabrasa/deploy/onnx_export.py: embedder → backbone → pool →
head, inputs named after the batch keys the embedder reads). The tokenizer stays outside the graph and comes
from the run, as in tabrasa/deploy/parity.py. A folder that already holds an export of the same checkpoint is
reused; an export of another checkpoint is refused rather than served under this run's name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tabrasa.deploy.onnx_export import GRAPH_FILE, export_onnx
from tabrasa.deploy.parity import parity
from tabrasa.deploy.run import TrainedRun
from tabrasa.errors import UserError

META_FILE = "tabrasa_export.json"


class OnnxModel(nn.Module):
    """`forward(batch)` runs the graph on the batch tensors it takes; `objective` is the run's (the graph's
    `probabilities` output is the same function of the logits, and the Predictor applies it itself)."""

    def __init__(self, graph: str | Path, objective: Any, device: str = "cpu") -> None:
        super().__init__()
        import onnxruntime

        self.objective = objective
        providers = ["CPUExecutionProvider"]
        if device.startswith("cuda") and "CUDAExecutionProvider" in onnxruntime.get_available_providers():
            providers.insert(0, "CUDAExecutionProvider")
        self.session = onnxruntime.InferenceSession(str(graph), providers=providers)
        self.input_names = [i.name for i in self.session.get_inputs()]

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        missing = [name for name in self.input_names if name not in batch]
        if missing:
            raise KeyError(f"the ONNX graph takes {self.input_names} but the batch lacks {missing}")
        feeds = {name: batch[name].detach().cpu().numpy() for name in self.input_names}
        (logits,) = self.session.run(["logits"], feeds)
        return torch.from_numpy(logits)


def ensure_export(run: TrainedRun, folder: Path) -> tuple[Path, float | None]:
    """The graph of `run` in `folder`: reused if that folder holds an export of this checkpoint, else
    exported there. Returns the graph and, for a fresh export, onnxruntime's max abs logit difference."""
    meta_path = folder / META_FILE
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if meta.get("checkpoint") != str(run.checkpoint_path):
            raise UserError(
                f"{folder} holds an ONNX export of {meta.get('checkpoint')}, not of {run.checkpoint_path}; "
                f"give --onnx-dir an empty folder (or none, for a temporary one)"
            )
        names = list(run.class_names) if run.class_names is not None else None
        if meta.get("class_names") != names:
            raise UserError(
                f"{folder}'s export names the classes {meta.get('class_names')} but the run has {names}; "
                f"export the run again into an empty folder"
            )
        return folder / GRAPH_FILE, None
    exported = export_onnx(run, folder)
    return exported.path, parity(run, exported.path)
