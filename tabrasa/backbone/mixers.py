"""Choose the token mixer (the softmax-weighted average itself) by the name in AttentionConfig."""

from __future__ import annotations

from torch import nn

from tabrasa.backbone.axial_attention import AxialAttention
from tabrasa.backbone.config import EncoderConfig
from tabrasa.backbone.local_attention import LocalAttention
from tabrasa.backbone.lowrank_attention import LowRankAttention
from tabrasa.backbone.sdpa_dispatch import FullAttention


def make_mixer(config: EncoderConfig) -> nn.Module:
    """One mixer per block. Only `lowrank` has parameters (blocks.{i}.attn.mixer.*), so the other kinds load
    each other's checkpoints unchanged."""
    a, p = config.attention, config.attention_dropout
    if a.kind == "full":
        return FullAttention(p)
    if a.kind == "local":
        return LocalAttention(a.window, a.global_tokens, p)
    if a.kind == "lowrank":
        return LowRankAttention(a.max_len, a.rank, p)
    if a.kind == "axial":
        return AxialAttention(p)
    raise ValueError(f"attention.kind={a.kind!r} is not known; choose one of full, local, lowrank, axial")
