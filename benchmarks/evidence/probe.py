"""The probe model every synthetic benchmark trains, and the batch it reads.

token ids → token table → backbone → one token → tabrasa's LinearHead. The embedder is a plain token table
and the head the library's own, so between two runs only the backbone changes. Which token the head reads
is a choice: the claims put the question at the end (`readout="last"`), so the answer must travel there
through the backbone; ListOps leads with a CLS token (`readout="first"`), as the library's classifiers do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

import torch
from torch import nn

from tabrasa.backbone import TokenGrid
from tabrasa.tasks.heads import LinearHead

PAD = 0  # id 0 is padding in every probe task: the token table's zero row
Readout = Literal["first", "last"]


@dataclass(frozen=True)
class Batch:
    """ids (B, N) int64 token ids, or (B, N, S) for S ids per position whose embeddings add up;
    label (B,) int64 class index; mask (B, N) bool, True at real tokens (None: every position is real);
    grid: the row-major layout of the tokens after grid.prefix, for axial attention (None: a sequence).

    Not the tokenizers' batch dict: a probe has no tokenizer, and a grid is not a tensor."""

    ids: torch.Tensor
    label: torch.Tensor
    mask: torch.Tensor | None = None
    grid: TokenGrid | None = None

    def to(self, device: torch.device | str) -> Batch:
        mask = None if self.mask is None else self.mask.to(device)
        return replace(self, ids=self.ids.to(device), label=self.label.to(device), mask=mask)


class ProbeModel(nn.Module):
    """Batch → class logits (B, classes). `backbone` is anything with `dim` and
    `forward(x, mask, *, grid)`: the Encoder, or the CNN and LSTM baselines."""

    def __init__(self, backbone: nn.Module, vocab_size: int, classes: int, readout: Readout = "last") -> None:
        super().__init__()
        if readout not in get_args(Readout):
            raise ValueError(f"ProbeModel readout={readout!r}: choose one of {get_args(Readout)}")
        self.readout = readout
        self.embed = nn.Embedding(vocab_size, backbone.dim, padding_idx=PAD)
        nn.init.trunc_normal_(self.embed.weight, std=0.02)  # as TextEmbedder, BERT and GPT-2
        with torch.no_grad():
            self.embed.weight[PAD].zero_()
        self.backbone = backbone
        self.head = LinearHead(backbone.dim, classes)

    def forward(self, batch: Batch) -> torch.Tensor:
        x = self.embed(batch.ids)  # (B, N, D) or (B, N, S, D)
        if x.ndim == 4:
            x = x.sum(dim=2)
        hidden = self.backbone(x, batch.mask, grid=batch.grid)  # (B, N, D)
        return self.head(hidden[:, 0 if self.readout == "first" else -1])  # (B, classes)
