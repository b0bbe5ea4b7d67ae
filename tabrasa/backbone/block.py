"""One transformer block: attention then feed-forward, each wrapped in a residual and a norm."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.config import NormPlacement
from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.positions import Rotation


class Block(nn.Module):
    """pre-LN: x + ls(f(LN(x))) (GPT-2, ViT; stable without warmup, Xiong et al. 2020).
    post-LN: LN(x + ls(f(x))) (Vaswani et al. 2017, BERT).

    ls1, ls2 scale each residual branch (LayerScale) or are the identity. Submodules are declared in timm's
    order (norm1, attn, ls1, norm2, mlp, ls2), so state dicts list keys as timm's do.
    """

    def __init__(
        self,
        attn: nn.Module,
        mlp: nn.Module,
        norm1: nn.Module,
        norm2: nn.Module,
        placement: NormPlacement,
        dropout: float,
        ls1: nn.Module | None = None,
        ls2: nn.Module | None = None,
    ) -> None:
        super().__init__()
        self.norm1 = norm1
        self.attn = attn
        self.ls1 = ls1 or nn.Identity()
        self.norm2 = norm2
        self.mlp = mlp
        self.ls2 = ls2 or nn.Identity()
        self.drop = nn.Dropout(dropout)
        self.pre_norm = placement == "pre"

    def forward(
        self,
        x: torch.Tensor,
        mask: AttentionMask,
        rotation: Rotation | None = None,
        record: list[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """record: where the attention layer appends its weights (see MultiHeadAttention), or None."""
        if self.pre_norm:
            x = x + self.drop(self.ls1(self.attn(self.norm1(x), mask, rotation, record)))
            return x + self.drop(self.ls2(self.mlp(self.norm2(x))))
        x = self.norm1(x + self.drop(self.ls1(self.attn(x, mask, rotation, record))))
        return self.norm2(x + self.drop(self.ls2(self.mlp(x))))
