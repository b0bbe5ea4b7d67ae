"""Normalisation layers selectable by name, including none (for the no-LayerNorm ablation)."""

from __future__ import annotations

from torch import nn

from tabrasa.backbone.config import NormKind


def make_norm(kind: NormKind, dim: int, eps: float, bias: bool) -> nn.Module:
    if kind == "layernorm":
        return nn.LayerNorm(dim, eps=eps, bias=bias)
    if kind == "rmsnorm":
        return nn.RMSNorm(dim, eps=eps)
    return nn.Identity()
