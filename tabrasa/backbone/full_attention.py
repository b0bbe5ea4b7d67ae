"""Full attention: every token attends to every other, softmax(QKᵀ/√d)·V, through torch's fused SDPA."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.sdpa import attend, attend_explicit


class FullAttention(nn.Module):
    """Token mixer without parameters; SDPA picks the flash, memory-efficient or math kernel."""

    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = dropout

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        # q, k, v: (B, H, N, hd) → (B, H, N, hd)
        return attend(
            q,
            k,
            v,
            allowed=mask.sdpa_mask(q.shape[-2], q.device),
            dropout=self.dropout if self.training else 0.0,
            causal=mask.sdpa_is_causal,
        )

    def forward_with_weights(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` through the explicit softmax, also returning the weights (B, H, N, N)."""
        return attend_explicit(
            q,
            k,
            v,
            allowed=mask.sdpa_mask(q.shape[-2], q.device),
            dropout=self.dropout if self.training else 0.0,
            causal=mask.sdpa_is_causal,
        )
