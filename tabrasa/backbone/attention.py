"""Multi-head self-attention: one fused QKV projection, an injected token mixer, an output projection."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.positions import Rotation


class MultiHeadAttention(nn.Module):
    """Projects tokens to queries, keys and values, mixes them per head, projects back.

    The mixer (full, local, low-rank, axial) is passed in, so every kind shares these projection weights
    and a model trained with one kind loads into another. The three projections are one matmul (`qkv`):
    one (N, D)×(D, 3D) GEMM is faster than three (N, D)×(D, D) ones.

    q_norm, k_norm: per-head norms of queries and keys (QK-norm, Dehghani et al. 2023, "Scaling Vision
    Transformers to 22 Billion Parameters"): they bound the attention logits, which otherwise grow until the
    softmax saturates. Identity when off, so the state dict has no entry for them.
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        mixer: nn.Module,
        bias: bool = True,
        qkv_bias: bool | None = None,
        q_norm: nn.Module | None = None,
        k_norm: nn.Module | None = None,
    ) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias if qkv_bias is None else qkv_bias)
        self.q_norm = q_norm or nn.Identity()
        self.k_norm = k_norm or nn.Identity()
        self.mixer = mixer
        self.proj = nn.Linear(dim, dim, bias=bias)

    def forward(
        self,
        x: torch.Tensor,
        mask: AttentionMask,
        rotation: Rotation | None = None,
        record: list[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """record: a list this call appends its attention weights (B, H, N, N) to, computed by the mixer's
        explicit path (`forward_with_weights`); None runs the fused kernel and records nothing."""
        B, N, D = x.shape
        q, k, v = self.qkv(x).view(B, N, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        # q, k, v: (B, H, N, hd); norms before rotation, as timm's EVA and ViT-22B order them
        q, k = self.q_norm(q), self.k_norm(k)
        if rotation is not None:
            q, k = rotation(q, k)
        if record is None:
            out = self.mixer(q, k, v, mask)  # (B, H, N, hd)
        else:
            out, weights = self._explicit(q, k, v, mask)  # (B, H, N, hd), (B, H, N, N)
            record.append(weights)
        return self.proj(out.transpose(1, 2).reshape(B, N, D))

    def _explicit(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask
    ) -> tuple[torch.Tensor, torch.Tensor]:
        explicit = getattr(self.mixer, "forward_with_weights", None)
        if explicit is None:
            raise TypeError(
                f"token mixer {type(self.mixer).__name__} cannot return its attention weights; give it a "
                f"forward_with_weights(q, k, v, mask) -> (out, weights) method, as FullAttention has"
            )
        return explicit(q, k, v, mask)
