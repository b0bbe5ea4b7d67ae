"""The probe model every claim trains: token ids → embedder → backbone → last token → linear head.

The embedder is a plain token table and the head tabrasa's own LinearHead, so between two runs only the
backbone changes. The head reads the last token, not a pooled mean: the long-range and recall tasks put the
question at the end, and the answer must travel there through the backbone.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from tabrasa.backbone import Encoder, EncoderConfig, SequenceLSTM
from tabrasa.evidence.tasks import PAD
from tabrasa.tasks.heads import LinearHead


class ProbeModel(nn.Module):
    """ids (B, N), or (B, N, S) with S ids per position whose embeddings add up (as BERT adds its token,
    segment and position tables) → class logits (B, classes). Every position is a real token."""

    def __init__(self, backbone: nn.Module, vocab_size: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, backbone.dim, padding_idx=PAD)
        nn.init.trunc_normal_(self.embed.weight, std=0.02)  # as TextEmbedder, BERT and GPT-2
        with torch.no_grad():
            self.embed.weight[PAD].zero_()
        self.backbone = backbone
        self.head = LinearHead(backbone.dim, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)  # (B, N, D) or (B, N, S, D)
        if x.ndim == 4:
            x = x.sum(dim=2)
        hidden = self.backbone(x)  # (B, N, D)
        return self.head(hidden[:, -1])  # (B, classes)


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@dataclass(frozen=True)
class Shape:
    """Width, depth and heads of the encoder a claim trains (pre-LN, learned positions, no dropout)."""

    dim: int = 64
    depth: int = 2
    heads: int = 4

    def encoder(self, max_len: int, **overrides: object) -> Encoder:
        """`overrides` are the ablated EncoderConfig fields (heads, norm)."""
        fields = {"dim": self.dim, "depth": self.depth, "heads": self.heads, "max_len": max_len} | overrides
        return Encoder(EncoderConfig(**fields))


def block_parameters(encoder: Encoder) -> int:
    """Parameters that compute (blocks and norms), without the position table: a lookup like the token
    embedding, and one whose size grows with max_len rather than with the model."""
    positions = encoder.positions
    return count_parameters(encoder) - (count_parameters(positions) if positions is not None else 0)


def matched_lstm(encoder: Encoder, max_layers: int = 16) -> SequenceLSTM:
    """The SequenceLSTM of the encoder's width whose depth brings its parameter count closest to the
    encoder's block parameters (each LSTM layer adds 2 directions × 4 gates × (D/2)·(D + D/2 + 2))."""
    dim = encoder.dim
    if dim % 2:
        raise ValueError(f"matched_lstm needs an even width (dim/2 units per direction), got dim={dim}")
    target = block_parameters(encoder)
    per_layer = 2 * 4 * (dim // 2) * (dim + dim // 2 + 2)
    norm = 2 * dim  # the LayerNorm after the residual
    layers = min(max(round((target - norm) / per_layer), 1), max_layers)
    return SequenceLSTM(dim, layers, dropout=0.0)
