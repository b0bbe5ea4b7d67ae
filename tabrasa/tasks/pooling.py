"""Sequence → vector: the first (CLS) token or the mean over real tokens (padding never counts)."""

from __future__ import annotations

from typing import Literal

import torch

Pooling = Literal["cls", "mean"]


def pool(x: torch.Tensor, mask: torch.Tensor, how: Pooling) -> torch.Tensor:
    """x (B, N, D), mask (B, N) → (B, D)."""
    if how == "cls":
        return x[:, 0]
    if how == "mean":
        weights = mask.to(x.dtype)[..., None]  # (B, N, 1)
        # clamp: a fully padded sequence pools to zeros, not 0/0 = NaN
        return (x * weights).sum(1) / weights.sum(1).clamp_min(1.0)
    raise ValueError(f"pooling={how!r} is not known; choose cls or mean")
