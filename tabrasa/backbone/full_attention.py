"""Full attention: every token attends to every other, softmax(QKᵀ/√d)·V, through torch's fused SDPA."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone.masking import AttentionMask


class FullAttention(nn.Module):
    """Token mixer without parameters; SDPA picks the flash, memory-efficient or math kernel."""

    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = dropout

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        # q, k, v: (B, H, N, hd) → (B, H, N, hd)
        return F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=mask.sdpa_mask(q.shape[-2], q.device),
            dropout_p=self.dropout if self.training else 0.0,
            is_causal=mask.sdpa_is_causal,
        )
