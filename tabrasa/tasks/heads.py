"""Task heads: a pooled vector → class logits or regression outputs. Kept out of the backbone."""

from __future__ import annotations

import torch
from torch import nn


class LinearHead(nn.Module):
    """LayerNorm → dropout → Linear. The norm matters for post-LN-free backbones (CNN, LSTM baselines)
    whose pooled features are not normalised; for a pre-LN encoder it is a cheap no-op in effect."""

    def __init__(self, dim: int, outputs: int, dropout: float = 0.0) -> None:
        super().__init__()
        if outputs < 1:
            raise ValueError(f"a head needs at least one output, got {outputs}")
        self.norm = nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(dim, outputs)
        nn.init.zeros_(self.fc.bias)
        nn.init.trunc_normal_(self.fc.weight, std=0.02)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.fc(self.drop(self.norm(pooled)))
