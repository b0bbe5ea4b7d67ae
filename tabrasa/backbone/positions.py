"""Position encodings: a learned table, fixed sinusoids (Vaswani et al. 2017) and rotary (Su et al. 2021).

Without any of them attention is permutation-equivariant: it sees a set, not a sequence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


def _check_length(n: int, max_len: int, kind: str) -> None:
    if n > max_len:
        raise ValueError(
            f"input has {n} tokens but the {kind} position table holds {max_len}; truncate the input in its "
            f"tokenizer (max_length), raise EncoderConfig.max_len, or resample the table of a pretrained "
            f"model (tabrasa.pretrained resample_positions=True)"
        )


class LearnedPositions(nn.Module):
    """An absolute position table added to the tokens (BERT, GPT-2, ViT)."""

    def __init__(self, max_len: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(max_len, dim))
        nn.init.trunc_normal_(self.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        _check_length(n, self.weight.shape[0], "learned")
        return x + self.weight[:n]


def sinusoid_table(n: int, dim: int, base: float = 10000.0) -> torch.Tensor:
    """PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(p / base^(2i/d)); shape (n, dim)."""
    position = torch.arange(n, dtype=torch.float32)[:, None]
    inv_freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(base) / dim))
    table = torch.zeros(n, dim)
    table[:, 0::2] = torch.sin(position * inv_freq)
    table[:, 1::2] = torch.cos(position * inv_freq)[:, : dim // 2]
    return table


class SinusoidalPositions(nn.Module):
    """Fixed sinusoids; no parameters, so nothing to load and any length up to max_len."""

    def __init__(self, max_len: int, dim: int, base: float = 10000.0) -> None:
        super().__init__()
        self.table: torch.Tensor
        self.register_buffer("table", sinusoid_table(max_len, dim, base), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        _check_length(n, self.table.shape[0], "sinusoidal")
        return x + self.table[:n].to(x.dtype)


class RotaryPositions(nn.Module):
    """Tables for rotating query and key channel pairs by position-dependent angles, so q·k depends only on
    the offset between tokens (RoFormer, Su et al. 2021).

    Uses the half-split pairing (channel i with i + d/2) of GPT-NeoX, ESM-2 and Hugging Face. The encoder
    owns one instance (non-persistent buffers: moved with the model, never saved), slices the tables once
    per forward pass and passes them to every attention layer.
    """

    def __init__(self, head_dim: int, max_len: int, base: float = 10000.0) -> None:
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        angles = torch.outer(torch.arange(max_len, dtype=torch.float32), inv_freq)  # (L, hd/2)
        angles = torch.cat((angles, angles), dim=-1)  # (L, hd)
        self.cos: torch.Tensor
        self.sin: torch.Tensor
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, n: int, unrotated: int = 0) -> Rotation:
        """Tables for `unrotated` leading tokens without a position (registers) then n positioned ones."""
        _check_length(n, self.cos.shape[0], "rotary")
        cos, sin = self.cos[:n], self.sin[:n]  # (n, hd)
        if unrotated:
            # cos 1, sin 0 is the identity rotation: those tokens carry no position.
            cos = torch.cat((cos.new_ones(unrotated, cos.shape[1]), cos))
            sin = torch.cat((sin.new_zeros(unrotated, sin.shape[1]), sin))
        return Rotation(cos, sin)


@dataclass(frozen=True)
class Rotation:
    """Rotary tables for one batch: cos and sin, each (N, hd)."""

    cos: torch.Tensor
    sin: torch.Tensor

    def __call__(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # q, k: (B, H, N, hd)
        cos, sin = self.cos.to(q.dtype), self.sin.to(q.dtype)
        return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def make_positions(
    kind: str, max_len: int, dim: int, rotary_dim: int, rotary_base: float
) -> tuple[nn.Module | None, RotaryPositions | None]:
    """(added positions, rotary positions) for a backbone's `positions` option: learned or sinusoidal
    tables are added to the tokens; rotary ones rotate queries and keys of width `rotary_dim`; "none" gives
    neither. Every family with positions (Encoder, GAU, continuous depth) builds them here."""
    if kind == "learned":
        return LearnedPositions(max_len, dim), None
    if kind == "sinusoidal":
        return SinusoidalPositions(max_len, dim), None
    if kind == "rotary":
        return None, RotaryPositions(rotary_dim, max_len, rotary_base)
    return None, None
