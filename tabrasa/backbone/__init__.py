"""Backbone: tokens (B, N, D) + mask (B, N) → contextual tokens (B, N, D). Knows nothing of modalities."""

from tabrasa.backbone.config import AttentionConfig, EncoderConfig
from tabrasa.backbone.encoder import Encoder
from tabrasa.backbone.grid_cnn import GridCNN
from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.protocol import Backbone
from tabrasa.backbone.sequence_cnn import SequenceCNN
from tabrasa.backbone.sequence_lstm import SequenceLSTM
from tabrasa.backbone.tokens import TokenGrid

__all__ = [
    "AttentionConfig",
    "AttentionMask",
    "Backbone",
    "Encoder",
    "EncoderConfig",
    "GridCNN",
    "SequenceCNN",
    "SequenceLSTM",
    "TokenGrid",
]
