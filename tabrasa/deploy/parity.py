"""The exported graph against the PyTorch model on a padded batch of another size than the traced one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from tabrasa.deploy.examples import example_raws
from tabrasa.deploy.modality import modality_of
from tabrasa.deploy.run import TrainedRun


def parity(run: TrainedRun, graph: str | Path, count: int = 5) -> float:
    """Max abs difference of the logits, onnxruntime vs PyTorch, on `count` synthetic examples of varied
    length (so the batch size and the length differ from the export's example and rows are padded)."""
    import onnxruntime

    tokenizer = run.tokenizer.eval()
    raws = example_raws(tokenizer, modality_of(tokenizer), count, seed=2)
    batch = tokenizer.collate([tokenizer.encode(r) for r in raws])
    session = onnxruntime.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    feeds = {i.name: batch[i.name].numpy() for i in session.get_inputs()}
    onnx_logits = session.run(["logits"], feeds)[0]
    with torch.inference_mode():
        torch_logits = run.model.cpu().eval()({k: torch.from_numpy(v) for k, v in feeds.items()}).numpy()
    return float(np.abs(onnx_logits - torch_logits).max())
