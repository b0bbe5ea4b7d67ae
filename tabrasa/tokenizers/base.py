"""The contract every modality's tokenizer keeps, and what passes between it and the backbone.

A `Tokenizer` is the parameter-free half that runs in DataLoader workers (it pickles cheaply):

    tokenizer.train() / .eval()        augmentation (crops, SpecAugment) only in train mode
    tokenizer.encode(raw) -> Batch     one raw example → its tensors, no batch dimension
    tokenizer.encode_batch(raws)       raw examples → one padded Batch (a faster path where batching pays)
    tokenizer.collate(encoded)         encoded examples → one padded Batch
    tokenizer.embedder(dim)            the learned half (an `Embedder`) that reads that Batch

The embedder turns a Batch into `Tokens` for the backbone. It is built from the tokenizer's own numbers
(vocabulary size, patch size × channels, mel bins), so those numbers are never typed twice. A data module
only hands raw examples to `encode_batch`; it never needs to know which tokenizer it holds.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import torch
from torch import nn

from tabrasa.backbone.tokens import TokenGrid

Batch = dict[str, torch.Tensor]
"""Tensors by name: one example's from `encode` (no batch dimension), a batch's from `collate`."""


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
    """Learned half of a tokenizer: Batch → Tokens of width `dim`."""

    dim: int

    @abstractmethod
    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens: ...


def learned_token(dim: int) -> nn.Parameter:
    """A learned (1, 1, dim) token put before the input's ([CLS], DeiT's [DIST]), initialised as ViT's and
    timm's are: truncated normal, std 0.02 (Dosovitskiy et al. 2021)."""
    token = nn.Parameter(torch.zeros(1, 1, dim))
    nn.init.trunc_normal_(token, std=0.02)
    return token


class Tokenizer(ABC):
    """Parameter-free preprocessing half of a tokenizer; see the module docstring for the contract.

    Subclasses implement `encode`, `collate` and `embedder`; `encode_batch` loops over `encode` unless a
    subclass has a faster batched path. `tokenizer(raw)` is `tokenizer.encode(raw)`.
    """

    training: bool = False

    def train(self, mode: bool = True) -> Self:
        """Augment from now on (mode=True) or not; returns self, as nn.Module.train does."""
        self.training = mode
        return self

    def eval(self) -> Self:
        return self.train(False)

    def encode(self, raw: Any) -> Batch:
        """One raw example (a string, an image, a waveform, …) → its tensors, no batch dimension."""
        raise NotImplementedError(f"{type(self).__name__} must implement encode(raw) -> Batch")

    def __call__(self, raw: Any) -> Batch:
        return self.encode(raw)

    def encode_batch(self, raws: Sequence[Any]) -> Batch:
        """Raw examples → one collated Batch. Calls `self(raw)`, so a tokenizer that only wraps another's
        `__call__` keeps working."""
        return self.collate([self(raw) for raw in raws])

    @abstractmethod
    def collate(self, examples: Sequence[Batch]) -> Batch:
        """Pad and stack encoded examples into the Batch the matching embedder reads."""

    @abstractmethod
    def embedder(self, dim: int) -> Embedder:
        """The learned half that matches this preprocessing, producing tokens of width `dim`."""


def in_mode(tokenizer: Tokenizer, training: bool) -> Tokenizer:
    """A shallow copy of `tokenizer` in train or eval mode: the training and evaluation loaders of one
    data module share the tokenizer's tables but not its mode, even in one process (num_workers=0)."""
    return copy.copy(tokenizer).train(training)


def check_token_ids(ids: torch.Tensor, size: int, noun: str, holds: str) -> None:
    """Integer ids in [0, size), or an error naming what the embedder holds (`holds`, e.g. "the vocabulary
    has 16000 entries"): an id out of range means the tokenizer and the embedder do not match."""
    if ids.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"input_ids has dtype {ids.dtype}; expected integer {noun} ids")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= size):
        raise ValueError(
            f"input_ids hold ids in [{int(ids.min())}, {int(ids.max())}] but {holds}; the tokenizer and "
            f"the embedder do not match"
        )


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


def with_label(encoded: Batch, raw: Any) -> Batch:
    """`encoded` plus the raw mapping's `label`, if it has one (raw examples may carry their label)."""
    if isinstance(raw, Mapping) and "label" in raw:
        encoded["label"] = torch.as_tensor(raw["label"])
    return encoded
