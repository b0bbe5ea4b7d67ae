"""tabrasa: one transformer backbone, tokenizers for every modality, and the evidence for the claim."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tabrasa.deploy.predictor import Predictor

__version__ = "0.1.0"


def load(run_or_checkpoint: str, ckpt: str = "best", device: str = "cpu") -> Predictor:
    """A trained run (folder or .ckpt) ready to `predict([...raw inputs...])`; see tabrasa.deploy."""
    from tabrasa.deploy import load as load_predictor

    return load_predictor(run_or_checkpoint, ckpt, device)
