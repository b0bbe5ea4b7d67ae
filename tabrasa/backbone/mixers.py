"""Choose the token mixer (the softmax-weighted average itself) by the name in AttentionConfig."""

from __future__ import annotations

from torch import nn

from tabrasa.backbone.config import EncoderConfig
from tabrasa.backbone.full_attention import FullAttention


def make_mixer(config: EncoderConfig) -> nn.Module:
    kind = config.attention.kind
    if kind == "full":
        return FullAttention(config.attention_dropout)
    raise ValueError(f"attention.kind={kind!r} is not available in this build; use kind: full")
