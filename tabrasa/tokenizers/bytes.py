"""Raw UTF-8 bytes as tokens: no vocabulary to train, nothing out of vocabulary (Perceiver IO's text input).

Ids 0-255 are the bytes themselves; the specials follow them, so a byte's id is its value:

    256 <pad>   257 <cls>   258 <eos>   259 <mask>

A text becomes <cls> its UTF-8 bytes <eos>. A character outside ASCII is several tokens ("é" is two,
"苹" three), so a review of 1,300 characters is about 1,300 tokens where WordPiece gives about 300: give
max_length room for that. The embedder is a plain token table over the 260 ids, a TextEmbedder, so its
spec is the text one; the tokenizer's own spec (kind "bytes") holds only the length and truncation policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import get_args

import torch

from tabrasa.tokenizers.base import Batch, Tokenizer, collate_labels, pad_sequences, with_label
from tabrasa.tokenizers.specs import Grid, Spec
from tabrasa.tokenizers.text import TextEmbedder, check_text
from tabrasa.tokenizers.truncation import TruncationPolicy, truncate

PAD_ID, CLS_ID, EOS_ID, MASK_ID = 256, 257, 258, 259
VOCAB_SIZE = 260


class ByteTokenizer(Tokenizer):
    """Text → `input_ids` (<cls> UTF-8 bytes <eos>) and `truncated` (bytes removed).

    max_length counts <cls> and <eos>. truncation: "error" raises on a longer text; "head", "tail" and
    "head_tail" cut bytes as TextTokenizer cuts subwords, and the count removed is returned. A cut may
    split a multi-byte character; the model sees its leading or trailing bytes, as a byte model should.
    """

    def __init__(self, max_length: int = 1024, truncation: TruncationPolicy = "head_tail") -> None:
        if max_length < 3:
            raise ValueError(f"max_length={max_length} leaves no room for a byte beside <cls> and <eos>")
        if truncation not in get_args(TruncationPolicy):
            raise ValueError(f"truncation={truncation!r} is not known; choose error, head, tail or head_tail")
        self.max_length = max_length
        self.truncation = truncation
        self.pad_id = PAD_ID

    @property
    def vocab_size(self) -> int:
        return VOCAB_SIZE

    def encode_ids(self, text: str, source: str = "text") -> tuple[list[int], int]:
        """One text → (ids with <cls> and <eos>, bytes removed by truncation)."""
        data = check_text(text, source, type(self).__name__).encode("utf-8")
        return truncate([CLS_ID, *data, EOS_ID], self.max_length, self.truncation, 1, 1, source)

    def encode(self, raw: str | Mapping[str, object]) -> Batch:
        """A text, or a mapping with `text` and an optional `label`."""
        text = raw["text"] if isinstance(raw, Mapping) else raw
        ids, removed = self.encode_ids(text)  # type: ignore[arg-type]
        out = {"input_ids": torch.tensor(ids, dtype=torch.long), "truncated": torch.tensor(removed)}
        return with_label(out, raw)

    def collate(self, examples: Sequence[Batch]) -> Batch:
        ids, mask = pad_sequences([e["input_ids"] for e in examples], PAD_ID)
        batch = {"input_ids": ids, "attention_mask": mask}
        batch["truncated"] = torch.stack([torch.as_tensor(e.get("truncated", 0)) for e in examples])
        return collate_labels(examples, batch)

    def embedder(self, dim: int) -> TextEmbedder:
        return TextEmbedder(VOCAB_SIZE, dim, PAD_ID)

    def decode(self, ids: Sequence[int]) -> str:
        """Ids → text, specials dropped; bytes that do not form UTF-8 (a cut character) become U+FFFD."""
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")

    def to_spec(self) -> ByteTokenizerSpec:
        return ByteTokenizerSpec(self.max_length, self.truncation)

    @classmethod
    def from_spec(cls, spec: ByteTokenizerSpec, folder: Path | None = None) -> ByteTokenizer:
        return cls(spec.max_length, spec.truncation)


@dataclass(frozen=True)
class ByteTokenizerSpec(Spec):
    """The 260 ids are fixed (bytes, then four specials), so only the length and its policy are stored."""

    kind = "bytes"
    max_length: int
    truncation: TruncationPolicy = "head_tail"

    def fitted(self, max_len: int, grid: Grid | None) -> ByteTokenizerSpec:
        return replace(self, max_length=max_len)  # <cls> and <eos> count, so tokens = max_length
