"""The two halves every modality's tokenizer has, and what passes between them and the backbone.

Preprocessing (a `Tokenizer`) turns one raw example into ids or features inside DataLoader workers; it
has no parameters, so it pickles cheaply to worker processes. Its `collate` pads a list of examples
into a batch dict. The learned half (an `Embedder`, an nn.Module) turns that batch into `Tokens` for the
backbone. `Tokenizer.embedder(dim)` builds the matching embedder from the preprocessing's own numbers
(vocabulary size, patch size × channels, mel bins), so those numbers are never typed twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from tabrasa.backbone.masking import TokenGrid

Batch = dict[str, torch.Tensor]


@dataclass
class Tokens:
    """Embedded tokens for the backbone.

    x: (B, N, D) float; mask: (B, N) bool, True at real tokens; grid: the row-major patch or frame grid the
    tokens after `grid.prefix` form (None for plain sequences, whose structure is their order).
    """

    x: torch.Tensor
    mask: torch.Tensor
    grid: TokenGrid | None = None


class Embedder(nn.Module, ABC):
    """Learned half of a tokenizer: batch dict → Tokens of width `dim`."""

    dim: int

    @abstractmethod
    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens: ...


class Tokenizer(ABC):
    """Parameter-free preprocessing half of a tokenizer."""

    @abstractmethod
    def __call__(self, example: Any) -> Batch:
        """One raw example → tensors for that example (no batch dimension)."""

    @abstractmethod
    def collate(self, examples: Sequence[Batch]) -> Batch:
        """Pad and stack examples into a batch dict the matching embedder reads."""

    @abstractmethod
    def embedder(self, dim: int) -> Embedder:
        """The learned half that matches this preprocessing, producing tokens of width `dim`."""


def pad_sequences(seqs: Sequence[torch.Tensor], pad_value: int | float) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad 1-D or (N, F) tensors to the longest; returns (padded (B, N, ...), mask (B, N))."""
    if not seqs:
        raise ValueError("cannot collate an empty list of examples")
    lengths = torch.tensor([len(s) for s in seqs])
    padded = nn.utils.rnn.pad_sequence(list(seqs), batch_first=True, padding_value=pad_value)
    mask = torch.arange(padded.shape[1])[None, :] < lengths[:, None]
    return padded, mask


def collate_labels(examples: Sequence[Batch], batch: Batch) -> Batch:
    """Stack the optional `label` field (class index or regression target) into the batch."""
    if "label" in examples[0]:
        batch["label"] = torch.stack([torch.as_tensor(e["label"]) for e in examples])
    return batch
