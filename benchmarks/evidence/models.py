"""The backbones the claims compare: the encoder at a `Shape`, and the LSTM matched to its size."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from tabrasa.backbone import Encoder, EncoderConfig, SequenceLSTM
from tabrasa.backbone.config import PositionKind


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@dataclass(frozen=True, kw_only=True)
class Shape:
    """Width, depth, heads and positions of the encoder a claim trains (pre-LN, no dropout)."""

    dim: int = 64
    depth: int = 2
    heads: int = 4
    positions: PositionKind = "learned"

    def __post_init__(self) -> None:
        for name in ("dim", "depth", "heads"):
            if getattr(self, name) < 1:
                raise ValueError(f"Shape.{name}={getattr(self, name)} must be >= 1")
        if self.dim % self.heads:
            raise ValueError(
                f"Shape.dim={self.dim} must be a multiple of heads={self.heads}: change one of them"
            )

    def encoder(self, max_len: int, **overrides: object) -> Encoder:
        """`overrides` are the ablated EncoderConfig fields (heads, norm)."""
        shape = {"dim": self.dim, "depth": self.depth, "heads": self.heads, "positions": self.positions}
        return Encoder(EncoderConfig(**(shape | {"max_len": max_len} | overrides)))


def matched_lstm(encoder: Encoder, max_layers: int = 16) -> SequenceLSTM:
    """The SequenceLSTM of the encoder's width whose depth brings its parameter count closest to the
    encoder's whole count, position table included (each LSTM layer adds 2 directions × 4 gates ×
    (D/2)·(D + D/2 + 2)). Wrapped in the same ProbeModel, both arms then have equal totals: the token table
    and head are the same size in both. Claims that compare the two give the encoder parameter-free
    sinusoidal positions (`Shape(positions="sinusoidal")`), so the match needs no LSTM layers
    standing in for a lookup table."""
    dim = encoder.dim
    if dim % 2:
        raise ValueError(f"matched_lstm needs an even width (dim/2 units per direction), got dim={dim}")
    target = count_parameters(encoder)
    per_layer = 2 * 4 * (dim // 2) * (dim + dim // 2 + 2)
    norm = 2 * dim  # the LayerNorm after the residual
    layers = min(max(round((target - norm) / per_layer), 1), max_layers)
    return SequenceLSTM(dim, layers, dropout=0.0)


def set_forget_bias(lstm: SequenceLSTM, value: float) -> SequenceLSTM:
    """Start every forget gate of `lstm` at bias `value` (both directions, every layer), in place.

    PyTorch draws LSTM biases around 0, so each forget gate starts near σ(0) = 0.5 and a stored value
    halves at every step: across 32 noise tokens its gradient is ~2^-32, and the LSTM of the long-range
    claim stayed at chance even at N=64. A positive forget bias is the standard remedy (Gers et al. 2000;
    Jozefowicz et al. 2015 recommend 1; Tallec & Ollivier 2018 derive larger values for longer ranges);
    σ(3) = 0.95 keeps a value for ~20 steps at the start, which training can lengthen. Only the values
    change, not the parameter count. nn.LSTM keeps two biases per gate (input and hidden), gates ordered
    (input, forget, cell, output): the input bias carries `value`, the hidden one 0."""
    with torch.no_grad():
        for name, bias in lstm.lstm.named_parameters():
            if name.startswith("bias_"):
                units = bias.shape[0] // 4
                bias[units : 2 * units] = value if name.startswith("bias_ih") else 0.0
    return lstm
