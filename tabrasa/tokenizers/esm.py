"""ESM-2's embedding step: the residue table plus two fixed rules the weights were trained with.

ESM-2 (Lin et al. 2023) trains with "token dropout": masked residues get a zero embedding instead of the
<mask> row, and at every step the embeddings are scaled by (1 - 0.15·0.8) / (1 - observed mask ratio),
so a sequence without masks is scaled by 0.88. Padding embeddings are zeroed. Both are reproduced here
exactly (as fair-esm's `ESM2.forward` and Hugging Face's `EsmEmbeddings`), so the checkpoint means what
it meant in training.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from tabrasa.tokenizers.base import Tokens
from tabrasa.tokenizers.protein import MASK_ID, ProteinEmbedder, ProteinTokenizer, UnknownPolicy
from tabrasa.tokenizers.specs import Spec, register_embedder, register_tokenizer
from tabrasa.tokenizers.truncation import TruncationPolicy

MASK_RATIO_TRAIN = 0.15 * 0.8  # ESM's masking rate × the share of masked positions given <mask>


class EsmEmbedder(ProteinEmbedder):
    """ProteinEmbedder + ESM's token-dropout rescaling and zeroed padding (`token_dropout=False`: neither
    rescaling nor zeroed masks, as an ESM config with token_dropout off)."""

    def __init__(self, dim: int, token_dropout: bool = True) -> None:
        super().__init__(dim)
        self.token_dropout = token_dropout

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        tokens = super().forward(batch)
        ids, real = batch["input_ids"], tokens.mask
        x = tokens.x  # (B, N, D)
        if self.token_dropout:
            is_mask = ids == MASK_ID
            x = x.masked_fill(is_mask[..., None], 0.0)
            observed = is_mask.sum(-1).float() / real.sum(-1).clamp(min=1)  # (B,)
            x = x * (1 - MASK_RATIO_TRAIN) / (1 - observed)[:, None, None]
        x = x * real[..., None].to(x.dtype)
        return Tokens(x, real, tokens.grid)

    def to_spec(self) -> EsmEmbedderSpec:
        return EsmEmbedderSpec(self.token_dropout)

    @classmethod
    def from_spec(cls, spec: EsmEmbedderSpec, dim: int) -> EsmEmbedder:
        return cls(dim, token_dropout=spec.token_dropout)


@dataclass(frozen=True)
class EsmEmbedderSpec(Spec):
    kind = "esm"
    token_dropout: bool


class EsmProteinTokenizer(ProteinTokenizer):
    """ProteinTokenizer whose embedder is an EsmEmbedder: use it in a task config that starts from ESM-2."""

    def __init__(
        self,
        max_length: int = 1024,
        truncation: TruncationPolicy = "head",
        unknown: UnknownPolicy = "error",
        token_dropout: bool = True,
    ) -> None:
        super().__init__(max_length, truncation, unknown)
        self.token_dropout = token_dropout

    def embedder(self, dim: int) -> EsmEmbedder:
        return EsmEmbedder(dim, self.token_dropout)

    def to_spec(self) -> EsmTokenizerSpec:  # type: ignore[override]
        return EsmTokenizerSpec(self.max_length, self.token_dropout, self.truncation, self.unknown)

    @classmethod
    def from_spec(  # type: ignore[override]
        cls, spec: EsmTokenizerSpec, folder: Path | None = None
    ) -> EsmProteinTokenizer:
        return cls(spec.max_length, spec.truncation, spec.unknown, token_dropout=spec.token_dropout)


@dataclass(frozen=True)
class EsmTokenizerSpec(Spec):
    """The ESM alphabet is fixed (tabrasa.tokenizers.protein), so only the lengths and policies are stored.
    `unknown` defaults to "error", the policy files written before it was stored were rebuilt with."""

    kind = "protein"
    max_length: int
    token_dropout: bool
    truncation: TruncationPolicy = "head"
    unknown: UnknownPolicy = "error"


register_tokenizer(EsmProteinTokenizer, EsmTokenizerSpec)
register_embedder(EsmEmbedder, EsmEmbedderSpec)
