"""Proteins: one token per residue in ESM-2's alphabet, so ESM checkpoints' embedding rows line up.

The alphabet and its order are fair-esm's `Alphabet.from_architecture("ESM-1b")` (shared by ESM-2 and
Hugging Face's EsmTokenizer): four specials, the 20 standard amino acids by frequency, the ambiguity codes
X B U Z O, the alignment gaps '.' and '-', a null slot and <mask>. A sequence is <cls> residues <eos>.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import torch

from tabrasa.tokenizers.base import Batch, collate_labels, pad_sequences, with_label
from tabrasa.tokenizers.framed import FramedTokenizer
from tabrasa.tokenizers.specs import Grid, Spec, register_embedder, register_tokenizer
from tabrasa.tokenizers.text import TextEmbedder
from tabrasa.tokenizers.truncation import TruncationPolicy

ESM_ALPHABET = [
    "<cls>", "<pad>", "<eos>", "<unk>",
    "L", "A", "G", "V", "S", "E", "R", "T", "I", "D", "P", "K", "Q", "N", "F", "Y", "M", "H", "W", "C",
    "X", "B", "U", "Z", "O", ".", "-",
    "<null_1>", "<mask>",
]  # fmt: skip
TOKEN_ID = {token: i for i, token in enumerate(ESM_ALPHABET)}
CLS_ID, PAD_ID, EOS_ID, UNK_ID, MASK_ID = (
    TOKEN_ID[t] for t in ("<cls>", "<pad>", "<eos>", "<unk>", "<mask>")
)
RESIDUES = frozenset(t for t in ESM_ALPHABET if len(t) == 1)

UnknownPolicy = Literal["error", "unk", "x"]


def clean_sequence(sequence: str, source: str = "protein") -> str:
    """Whitespace removed, one trailing '*' (a stop codon) stripped, ASCII letters upper-cased."""
    if not isinstance(sequence, str):
        raise TypeError(f"{source} is {type(sequence).__name__}; ProteinTokenizer takes str")
    # ASCII letters only: str.upper() would turn 'ß' into 'SS' and 'ﬀ' into 'FF', residues never there.
    residues = "".join(c.upper() if "a" <= c <= "z" else c for c in "".join(sequence.split()))
    if residues.endswith("*"):
        residues = residues[:-1]
    if not residues:
        raise ValueError(f"{source} is empty (input {sequence!r}); drop it from the dataset")
    return residues


class ProteinTokenizer(FramedTokenizer):
    """Amino-acid string → `input_ids` (<cls> residues <eos>) and `truncated` (residues removed).

    Cleaning, in order: all whitespace is removed (FASTA line breaks), one trailing '*' (the stop codon of
    a translated gene) is stripped, letters are upper-cased. An empty result is an error.
    unknown: what a character outside the alphabet (e.g. 'J', a digit, an inner '*') becomes: "error"
    raises naming the sequence, position and character (fair-esm raises a bare KeyError); "unk" maps it to
    <unk> (as transformers' EsmTokenizer does); "x" to X, the unknown amino acid.
    max_length counts <cls> and <eos> (ESM-2 was trained on 1024); truncation as for text.
    """

    cls_id, eos_id = CLS_ID, EOS_ID

    def __init__(
        self, max_length: int = 1024, truncation: TruncationPolicy = "head", unknown: UnknownPolicy = "error"
    ) -> None:
        if unknown not in ("error", "unk", "x"):
            raise ValueError(f"unknown={unknown!r} is not known; choose error, unk or x")
        super().__init__(max_length, truncation, PAD_ID)
        if max_length < 3:
            raise ValueError(f"max_length={max_length} leaves no room for a residue beside <cls> and <eos>")
        self.unknown = unknown

    @property
    def vocab_size(self) -> int:
        return len(ESM_ALPHABET)

    def clean(self, sequence: str, source: str = "protein") -> str:
        return clean_sequence(sequence, source)

    def encode_ids(self, sequence: str, source: str = "protein") -> tuple[list[int], int]:
        """Sequence → (ids with <cls> and <eos>, residues removed by truncation)."""
        ids: list[int] = []  # the residues; frame() adds <cls> and <eos>
        for position, letter in enumerate(self.clean(sequence, source)):
            if letter in RESIDUES:
                ids.append(TOKEN_ID[letter])
            elif self.unknown == "unk":
                ids.append(UNK_ID)
            elif self.unknown == "x":
                ids.append(TOKEN_ID["X"])
            else:
                raise ValueError(
                    f"{source} has {letter!r} at residue {position + 1} (1-based, whitespace removed), "
                    f"which is not in the ESM alphabet; fix the sequence or build "
                    f"ProteinTokenizer(unknown=...) with 'unk' (<unk> token) or 'x' (X, unknown amino acid)"
                )
        return self.frame(ids, source)

    def encode(self, raw: str | Mapping[str, Any]) -> Batch:
        """A sequence, or a mapping with `sequence` and optional `id` (named in errors) and `label`."""
        if isinstance(raw, Mapping):
            if "sequence" not in raw:
                raise KeyError(f"protein example has keys {sorted(raw)}; put the residues under sequence")
            source = f"protein {raw['id']}" if "id" in raw else "protein"
            ids, removed = self.encode_ids(raw["sequence"], source)
        else:
            ids, removed = self.encode_ids(raw)
        return with_label({"input_ids": torch.tensor(ids), "truncated": torch.tensor(removed)}, raw)

    def collate(self, examples: Sequence[Batch]) -> Batch:
        ids, mask = pad_sequences([e["input_ids"] for e in examples], PAD_ID)
        return collate_labels(examples, {"input_ids": ids, "attention_mask": mask})

    def embedder(self, dim: int) -> ProteinEmbedder:
        return ProteinEmbedder(dim)

    def to_spec(self) -> ProteinTokenizerSpec:
        return ProteinTokenizerSpec(self.max_length, self.truncation, self.unknown)

    @classmethod
    def from_spec(cls, spec: ProteinTokenizerSpec, folder: Path | None = None) -> ProteinTokenizer:
        return cls(spec.max_length, spec.truncation, spec.unknown)


@dataclass(frozen=True)
class ProteinTokenizerSpec(Spec):
    """The alphabet is fixed (ESM's), so only the length and the two policies are stored. The kind is not
    "protein": that one names EsmProteinTokenizer, whose embedder adds ESM's token-dropout rule."""

    kind = "residues"
    max_length: int
    truncation: TruncationPolicy = "head"
    unknown: UnknownPolicy = "error"

    def fitted(self, max_len: int, grid: Grid | None) -> ProteinTokenizerSpec:
        return replace(self, max_length=max_len)  # <cls> and <eos> count, so tokens = max_length


@dataclass(frozen=True)
class ProteinEmbedderSpec(Spec):
    """No fields: the table is always the 33-row ESM alphabet with <pad> as padding."""

    kind = "residues"


class ProteinEmbedder(TextEmbedder):
    """Residue ids (B, N) → vectors (B, N, D); `token_embed`: nn.Embedding(33, D, padding_idx=1) as ESM."""

    def __init__(self, dim: int) -> None:
        super().__init__(len(ESM_ALPHABET), dim, pad_id=PAD_ID)

    def to_spec(self) -> ProteinEmbedderSpec:  # type: ignore[override]
        return ProteinEmbedderSpec()

    @classmethod
    def from_spec(cls, spec: ProteinEmbedderSpec, dim: int) -> ProteinEmbedder:  # type: ignore[override]
        return cls(dim)


register_tokenizer(ProteinTokenizer, ProteinTokenizerSpec)
register_embedder(ProteinEmbedder, ProteinEmbedderSpec)
