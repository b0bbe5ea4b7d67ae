"""The one call to torch's fused attention kernel, softmax(QKᵀ/√d)·V, shared by every token mixer.

Keeping it in one place means a kernel choice, a dtype rule or a mask convention is changed once for the
full, local, low-rank and axial mixers alike. `attend_explicit` is its unfused twin that also returns
the attention weights: slower and O(N²) in memory, used only when a caller asks for the weights.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    allowed: torch.Tensor | None = None,
    dropout: float = 0.0,
    causal: bool = False,
) -> torch.Tensor:
    """q: (..., Nq, hd), k and v: (..., Nk, hd) → (..., Nq, hd).

    allowed: bool, broadcast to (..., Nq, Nk), True where a query may attend to a key; None = everywhere.
    causal: the fused lower-triangular mask (only without `allowed`, as SDPA requires).
    """
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=dropout, is_causal=causal)


def attend_explicit(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    allowed: torch.Tensor | None = None,
    dropout: float = 0.0,
    causal: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`attend` computed as softmax(q kᵀ/√d + bias) v with the weights materialised, for inspection.

    Same arguments and output as `attend`, plus the weights (..., Nq, Nk) before dropout: 0 where a key is
    not allowed, each row summing to 1. The fused kernel never forms this matrix, so it cannot return it.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., Nq, Nk)
    if causal:
        band = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        allowed = band if allowed is None else allowed & band
    if allowed is not None:
        # The additive bias SDPA builds from a boolean mask: -inf where a key is not allowed.
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = scores.softmax(dim=-1)
    return F.dropout(weights, dropout) @ v, weights
