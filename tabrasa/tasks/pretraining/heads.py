"""Pretraining heads: hidden tokens → vocabulary logits, or → the pixels / log-mel values of a patch.

`TokenPredictionHead` is BERT's `BertLMPredictionHead` and ESM's `EsmLMHead` (dense → GELU → LayerNorm →
decoder + bias), so a masked-LM checkpoint exports to `BertForMaskedLM` / `EsmForMaskedLM` key for key.
The decoder's weight is the input embedding table when tied (Press & Wolf 2017, as BERT and ESM do): the
head is then handed that table at call time instead of owning a second reference to it, so checkpoints
hold each tensor once."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class TokenPredictionHead(nn.Module):
    """(…, D) → (…, V). tied: the decoder weight comes from `forward(…, embedding=table)`."""

    def __init__(self, dim: int, vocab_size: int, eps: float = 1e-5, tied: bool = True) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim, eps=eps)
        self.decoder = None if tied else nn.Linear(dim, vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(vocab_size))
        nn.init.trunc_normal_(self.dense.weight, std=0.02)
        nn.init.zeros_(self.dense.bias)
        if self.decoder is not None:
            nn.init.trunc_normal_(self.decoder.weight, std=0.02)

    @property
    def tied(self) -> bool:
        return self.decoder is None

    def forward(self, hidden: torch.Tensor, embedding: torch.Tensor | None = None) -> torch.Tensor:
        x = self.norm(F.gelu(self.dense(hidden)))  # exact-erf GELU, as BERT's and ESM's heads
        if self.decoder is not None:
            return self.decoder(x) + self.bias
        if embedding is None:
            raise ValueError("a tied head needs the input embedding table: forward(hidden, embedding=...)")
        return F.linear(x, embedding, self.bias)
