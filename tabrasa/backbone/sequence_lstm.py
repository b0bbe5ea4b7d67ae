"""A bidirectional LSTM over the token sequence: the recurrence baseline for text and protein.

Behind the Encoder contract, so only the inductive bias (order, processed step by step) changes.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tabrasa.backbone.tokens import TokenGrid


class SequenceLSTM(nn.Module):
    """dim: token width (each direction has dim/2 units, so outputs are dim wide). layers: stacked LSTMs.

    Sequences are packed by their real length (pack_padded_sequence), so the backward direction starts
    at each sequence's last real token and padding never reaches real outputs.
    """

    def __init__(self, dim: int = 128, layers: int = 4, dropout: float = 0.1) -> None:
        super().__init__()
        if dim % 2:
            raise ValueError(f"SequenceLSTM dim={dim} must be even (dim/2 units per direction)")
        self.dim = dim
        self.lstm = nn.LSTM(
            dim,
            dim // 2,
            num_layers=layers,
            batch_first=True,
            bidirectional=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.norm = nn.LayerNorm(dim)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        B, N, _ = x.shape
        lengths = torch.full((B,), N) if mask is None else mask.sum(dim=1).cpu()
        # A fully padded sequence is run as one step and zeroed below: packing refuses length 0.
        packed = pack_padded_sequence(x, lengths.clamp_min(1), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=N)  # (B, N, D)
        out = self.norm(out + x)  # residual: the head sees the token as well as its context
        return out if mask is None else out * mask[..., None].to(out.dtype)
