"""DeiT's embedder (Touvron et al. 2021, "Training data-efficient image transformers & distillation through
attention"): a ViT patch projection, a [CLS] token and a distillation token, in that order before the
patches. The distillation token learns from a teacher's predictions during DeiT's training; a fine-tune
may pool either token (or their mean, as DeiT's own inference head does with its two heads).

The preprocessing is the ViT one (`ImageTokenizer`); only the learned half differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import torch

from tabrasa.tokenizers.base import Tokens, learned_token
from tabrasa.tokenizers.image import ImageEmbedder, Size, as_pair
from tabrasa.tokenizers.specs import Spec, register_embedder


@dataclass(frozen=True)
class DeitEmbedderSpec(Spec):
    kind = "deit"
    channels: int
    patch_size: Size


class DeitEmbedder(ImageEmbedder):
    """pixels (B, C, H, W) → [CLS], [DIST], one token per patch: (B, 2 + H/p_h · W/p_w, D)."""

    def __init__(self, channels: int, patch_size: int | Sequence[int], dim: int) -> None:
        super().__init__(channels, as_pair(patch_size, "patch_size"), dim, cls_token=True)
        self.dist_token = learned_token(dim)

    def to_spec(self) -> DeitEmbedderSpec:  # type: ignore[override]
        return DeitEmbedderSpec(self.channels, self.patch_size)

    @classmethod
    def from_spec(cls, spec: DeitEmbedderSpec, dim: int) -> DeitEmbedder:  # type: ignore[override]
        return cls(spec.channels, spec.patch_size, dim)

    def no_weight_decay(self) -> set[str]:
        return {"cls_token", "dist_token"}

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        tokens = super().forward(batch)  # [CLS] + patches
        x, B = tokens.x, tokens.x.shape[0]
        x = torch.cat([x[:, :1], self.dist_token.expand(B, -1, -1), x[:, 1:]], dim=1)  # (B, 2 + N, D)
        mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
        grid = None if tokens.grid is None else replace(tokens.grid, prefix=2)
        return Tokens(x, mask, grid)


register_embedder(DeitEmbedder, DeitEmbedderSpec)
