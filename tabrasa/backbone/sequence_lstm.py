"""A bidirectional LSTM over the token sequence: the recurrence baseline for text and protein.

Behind the Encoder contract, so only the inductive bias (order, processed step by step) changes.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tabrasa.backbone.tokens import TokenGrid

WEIGHT_NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def reversal_index(lengths: torch.Tensor, steps: int, device: torch.device) -> torch.Tensor:
    """(B, steps) gather index that reverses each row's first `lengths[b]` tokens and leaves its padding
    where it was; applying it twice is the identity."""
    positions = torch.arange(steps, device=device)[None]
    real = lengths.to(device)[:, None]
    return torch.where(positions < real, real - 1 - positions, positions)


def gather_steps(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return x.gather(1, index[..., None].expand(-1, -1, x.shape[-1]))


class SequenceLSTM(nn.Module):
    """dim: token width (each direction has dim/2 units, so outputs are dim wide). layers: stacked LSTMs
    (5 keeps it within 20% of the transformer's size at 64 and at 128 wide; 4 falls to 76% at 64).

    Padding (a suffix, as every tokenizer pads) never reaches a real token's output: the backward
    direction starts at each sequence's last real token. On CUDA the sequences are packed by length
    (cuDNN runs packed batches fast). On CPU, PyTorch steps a PackedSequence one time step at a time with
    a shrinking batch, about 4× slower than its fused kernel on a padded batch when lengths differ, so
    each direction of each layer runs padded instead, the backward one on the tokens reversed within each
    sequence's length: the same outputs at real tokens (tests/backbone/test_baselines.py checks it against
    the packed path), from the same `nn.LSTM` parameters.
    """

    def __init__(self, dim: int = 128, layers: int = 5, dropout: float = 0.1) -> None:
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
        out = self.packed(x, lengths) if x.is_cuda else self.padded(x, lengths)
        out = self.norm(out + x)  # residual: the head sees the token as well as its context
        return out if mask is None else out * mask[..., None].to(out.dtype)

    def packed(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # A fully padded sequence is run as one step and zeroed in forward: packing refuses length 0.
        packed = pack_padded_sequence(x, lengths.clamp_min(1), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        return pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]

    def padded(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        lstm = self.lstm
        zeros = x.new_zeros(1, x.shape[0], lstm.hidden_size)
        reverse = reversal_index(lengths, x.shape[1], x.device)  # once per batch, for every layer

        def direction(inputs: torch.Tensor, layer: int, suffix: str) -> torch.Tensor:
            weights = [getattr(lstm, f"{name}_l{layer}{suffix}") for name in WEIGHT_NAMES]
            # torch.lstm is the kernel nn.LSTM calls: one layer, one direction, batch first.
            return torch.lstm(inputs, (zeros, zeros), weights, True, 1, 0.0, self.training, False, True)[0]

        hidden = x
        for layer in range(lstm.num_layers):
            forward = direction(hidden, layer, "")
            backward = gather_steps(direction(gather_steps(hidden, reverse), layer, "_reverse"), reverse)
            hidden = torch.cat([forward, backward], dim=-1)
            if layer < lstm.num_layers - 1:  # nn.LSTM's dropout: between layers, not after the last
                hidden = F.dropout(hidden, lstm.dropout, self.training)
        return hidden
