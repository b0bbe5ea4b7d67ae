"""Comparing tabrasa against reference implementations, and checkpoint key lists at full size on meta."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from tabrasa.pretrained import Pretrained

TOLERANCE = 1e-5  # fp32 on CPU, as the issue asks


def run(model: Pretrained, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """Embedder then backbone, no gradients."""
    with torch.no_grad():
        tokens = model.embedder(batch)
        return model.encoder(tokens.x, tokens.mask, grid=tokens.grid)


def assert_match(
    family: str, ours: torch.Tensor, reference: torch.Tensor, mask: torch.Tensor | None = None
) -> float:
    """Max abs error over real tokens; printed (pytest -s) for the record and held to TOLERANCE."""
    assert ours.shape == reference.shape, (ours.shape, reference.shape)
    diff = (ours - reference).abs()
    error = float(diff[mask].max() if mask is not None else diff.max())
    print(f"[{family}] max abs error vs reference: {error:.3e}")
    assert error <= TOLERANCE, f"{family}: max abs error {error:.3e} > {TOLERANCE}"
    return error


def hf_file_state(model_class: type[nn.Module], config: object) -> dict[str, torch.Tensor]:
    """The keys and shapes a Hugging Face model writes to its file, built on the meta device (no memory):
    transformers 5 renamed some modules, and `revert_weight_conversion` gives the names in the file."""
    from transformers.core_model_loading import revert_weight_conversion

    with torch.device("meta"):
        model = model_class(config)
    return revert_weight_conversion(model, model.state_dict())
