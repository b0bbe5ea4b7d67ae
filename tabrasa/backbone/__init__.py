"""Backbone: tokens (B, N, D) + mask (B, N) → contextual tokens (B, N, D). Knows nothing of modalities."""

from tabrasa.backbone.config import AttentionConfig, EncoderConfig
from tabrasa.backbone.encoder import Encoder
from tabrasa.backbone.gau import GAUConfig, GAUEncoder
from tabrasa.backbone.mamba import Mamba
from tabrasa.backbone.mamba_config import MambaConfig
from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.ode_depth import ODEConfig, ODEEncoder
from tabrasa.backbone.patch_grid_cnn import PatchGridCNN
from tabrasa.backbone.pixel_cnn import PixelCNN
from tabrasa.backbone.protocol import Backbone
from tabrasa.backbone.sequence_cnn import SequenceCNN
from tabrasa.backbone.sequence_lstm import SequenceLSTM
from tabrasa.backbone.spectrogram_cnn import SpectrogramCNN
from tabrasa.backbone.tokens import TokenGrid

__all__ = [
    "AttentionConfig",
    "AttentionMask",
    "Backbone",
    "Encoder",
    "EncoderConfig",
    "GAUConfig",
    "GAUEncoder",
    "Mamba",
    "MambaConfig",
    "ODEConfig",
    "ODEEncoder",
    "PatchGridCNN",
    "PixelCNN",
    "SequenceCNN",
    "SequenceLSTM",
    "SpectrogramCNN",
    "TokenGrid",
]
