"""Backbone: tokens (B, N, D) + mask (B, N) → contextual tokens (B, N, D). Knows nothing of modalities."""

from tabrasa.backbone.config import AttentionConfig, EncoderConfig
from tabrasa.backbone.encoder import Encoder
from tabrasa.backbone.masking import AttentionMask, TokenGrid

__all__ = ["AttentionConfig", "AttentionMask", "Encoder", "EncoderConfig", "TokenGrid"]
