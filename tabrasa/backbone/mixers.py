"""Choose the token mixer (the softmax-weighted average itself) by the name in AttentionConfig."""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from tabrasa.backbone.axial_attention import AxialAttention
from tabrasa.backbone.config import AttentionKind, EncoderConfig
from tabrasa.backbone.full_attention import FullAttention
from tabrasa.backbone.local_attention import LocalAttention
from tabrasa.backbone.lowrank_attention import LowRankAttention

# Register tokens lead every sequence (tabrasa/backbone/registers.py): `local` treats them as global tokens
# and `lowrank` projections span them as well as max_len input tokens.
MIXERS: dict[AttentionKind, Callable[[EncoderConfig], nn.Module]] = {
    "full": lambda c: FullAttention(c.attention_dropout),
    "local": lambda c: LocalAttention(
        c.attention.window, c.attention.global_tokens + c.register_tokens, c.attention_dropout
    ),
    "lowrank": lambda c: LowRankAttention(
        c.max_len + c.register_tokens, c.attention.rank, c.attention_dropout
    ),
    "axial": lambda c: AxialAttention(c.attention_dropout),
}


def make_mixer(config: EncoderConfig) -> nn.Module:
    """One mixer per block. Only `lowrank` has parameters (blocks.{i}.attn.mixer.*), so the other kinds load
    each other's checkpoints unchanged. The kind was validated by AttentionConfig."""
    return MIXERS[config.attention.kind](config)
