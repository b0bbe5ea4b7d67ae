"""Raw UTF-8 bytes as tokens: no vocabulary to train, nothing out of vocabulary (Perceiver IO's text input).

Ids 0-255 are the bytes themselves; the specials follow them, so a byte's id is its value:

    256 <pad>   257 <cls>   258 <eos>   259 <mask>

A text becomes <cls> its UTF-8 bytes <eos>. A character outside ASCII is several bytes ("é" is two,
"苹" three), so a review of 1,300 characters is about 1,300 bytes where WordPiece gives about 300 tokens:
give max_length room for that. max_length always counts bytes.

patch_size = 1 (the default): one byte a token. The embedder is a plain token table over the 260 ids, a
TextEmbedder, so its spec is the text one; the tokenizer's own spec (kind "bytes") holds the length, the
truncation policy and the patch size.

patch_size = P > 1: P bytes a token, as in MEGABYTE's global model (Yu et al. 2023). The byte sequence is
padded with <pad> to a multiple of P and cut into ceil(max_length / P) tokens of P bytes, so a review of
1,024 bytes is 256 tokens, each carrying 4 bytes. `BytePatchEmbedder` embeds each byte, concatenates the
patch's byte vectors in order (so a byte's place in its patch is known) and projects them to `dim`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tabrasa.tokenizers.base import (
    Batch,
    Embedder,
    Tokens,
    check_token_ids,
    collate_labels,
    pad_sequences,
    with_label,
)
from tabrasa.tokenizers.framed import FramedTokenizer
from tabrasa.tokenizers.specs import Grid, Spec, register_embedder, register_tokenizer
from tabrasa.tokenizers.text import TextEmbedder, check_text
from tabrasa.tokenizers.truncation import TruncationPolicy
from tabrasa.tokenizers.vocabulary import TokenVocabulary

PAD_ID, CLS_ID, EOS_ID, MASK_ID = 256, 257, 258, 259
VOCAB_SIZE = 260


class ByteTokenizer(FramedTokenizer):
    """Text → `input_ids` (<cls> UTF-8 bytes <eos>) and `truncated` (bytes removed).

    max_length counts bytes, <cls> and <eos> included. truncation: "error" raises on a longer text;
    "head", "tail" and "head_tail" cut bytes as TextTokenizer cuts subwords, and the count removed is
    returned. A cut may split a multi-byte character; the model sees its leading or trailing bytes, as a
    byte model should. patch_size: bytes per token; above 1, `input_ids` is (tokens, patch_size) with the
    last patch filled by <pad>, and a token is real when any of its bytes is.
    """

    cls_id, eos_id = CLS_ID, EOS_ID

    def __init__(
        self, max_length: int = 1024, truncation: TruncationPolicy = "head_tail", patch_size: int = 1
    ) -> None:
        if max_length < 3:
            raise ValueError(
                f"max_length={max_length} leaves no room for a byte beside <cls> and <eos>; set max_length "
                f"to at least 3 (it counts bytes, whatever the patch_size)"
            )
        super().__init__(max_length, truncation, PAD_ID)
        if isinstance(patch_size, bool) or not isinstance(patch_size, int) or patch_size < 1:
            raise ValueError(
                f"patch_size={patch_size!r} must be a whole number of bytes per token >= 1; use 1 for one "
                f"byte a token, or e.g. 4 for MEGABYTE-style patches"
            )
        self.patch_size = patch_size

    @property
    def vocab_size(self) -> int:
        return VOCAB_SIZE

    @property
    def max_tokens(self) -> int:
        """Tokens of the longest encoded text, ceil(max_length / patch_size): what the positions must hold."""
        return -(-self.max_length // self.patch_size)

    def token_vocabulary(self) -> TokenVocabulary:
        """The 260 fixed ids for masked or causal byte prediction (ByT5-style); one byte a token only."""
        if self.patch_size != 1:
            raise ValueError(
                f"patch_size={self.patch_size} puts {self.patch_size} bytes in a token, and token prediction "
                f"predicts one id a token; pretrain with patch_size: 1"
            )
        return TokenVocabulary(VOCAB_SIZE, MASK_ID, PAD_ID, (PAD_ID, CLS_ID, EOS_ID, MASK_ID))

    def encode_ids(self, text: str, source: str = "text") -> tuple[list[int], int]:
        """One text → (byte ids with <cls> and <eos>, bytes removed by truncation); not yet in patches."""
        data = check_text(text, source, type(self).__name__).encode("utf-8")
        return self.frame(data, source)

    def encode(self, raw: str | Mapping[str, object]) -> Batch:
        """A text, or a mapping with `text` and an optional `label`."""
        text = raw["text"] if isinstance(raw, Mapping) else raw
        ids, removed = self.encode_ids(text)  # type: ignore[arg-type]
        out = {"input_ids": byte_patches(ids, self.patch_size), "truncated": torch.tensor(removed)}
        return with_label(out, raw)

    def collate(self, examples: Sequence[Batch]) -> Batch:
        # Whole tokens are padded: attention_mask is (B, N), True at every token holding a real byte.
        ids, mask = pad_sequences([e["input_ids"] for e in examples], PAD_ID)  # (B, N) or (B, N, P)
        batch = {"input_ids": ids, "attention_mask": mask}
        batch["truncated"] = torch.stack([torch.as_tensor(e.get("truncated", 0)) for e in examples])
        return collate_labels(examples, batch)

    def embedder(self, dim: int) -> TextEmbedder | BytePatchEmbedder:
        if self.patch_size == 1:
            return TextEmbedder(VOCAB_SIZE, dim, PAD_ID)
        return BytePatchEmbedder(dim, self.patch_size)

    def decode(self, ids: Sequence[int] | Sequence[Sequence[int]]) -> str:
        """Ids (or rows of patch ids) → text, specials dropped; bytes that do not form UTF-8 (a cut
        character) become U+FFFD."""
        flat = torch.as_tensor(ids, dtype=torch.long).flatten().tolist()
        return bytes(i for i in flat if i < 256).decode("utf-8", errors="replace")

    def to_spec(self) -> ByteTokenizerSpec:
        return ByteTokenizerSpec(self.max_length, self.truncation, self.patch_size)

    @classmethod
    def from_spec(cls, spec: ByteTokenizerSpec, folder: Path | None = None) -> ByteTokenizer:
        return cls(spec.max_length, spec.truncation, spec.patch_size)


def byte_patches(ids: list[int], patch_size: int) -> torch.Tensor:
    """Byte ids → (n,) for patch_size 1, else (ceil(n / P), P): <pad> to a multiple of P, cut in order."""
    if patch_size == 1:
        return torch.tensor(ids, dtype=torch.long)
    fill = -len(ids) % patch_size
    return torch.tensor(ids + [PAD_ID] * fill, dtype=torch.long).view(-1, patch_size)  # (N, P)


@dataclass(frozen=True)
class ByteTokenizerSpec(Spec):
    """The 260 ids are fixed (bytes, then four specials), so only the length, its policy and the patch
    size are stored. patch_size defaults to 1, so a spec written before patches existed still loads."""

    kind = "bytes"
    max_length: int
    truncation: TruncationPolicy = "head_tail"
    patch_size: int = 1

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if self.patch_size == 1:
            del data["patch_size"]  # one byte a token writes the file it always did, which any version reads
        return data

    @property
    def max_tokens(self) -> int:
        """Tokens of the longest encoded text: what a checkpoint's positions must hold."""
        return -(-self.max_length // self.patch_size)

    def fitted(self, max_len: int, grid: Grid | None) -> ByteTokenizerSpec:
        # max_len positions hold max_len tokens of patch_size bytes (<cls> and <eos> among them).
        return replace(self, max_length=max_len * self.patch_size)


@dataclass(frozen=True)
class BytePatchEmbedderSpec(Spec):
    """The byte table is always the 260 ids; patch_size and byte_dim fix every other shape."""

    kind = "byte_patches"
    patch_size: int
    byte_dim: int


class BytePatchEmbedder(Embedder):
    """Byte patches (B, N, P) → tokens (B, N, dim): each byte → `byte_dim`, the P vectors concatenated in
    byte order (P · byte_dim), then one bias-free Linear to `dim`.

    byte_dim defaults to ceil(dim / P), MEGABYTE's split, where each byte gets D/P of the global model's
    width and the concatenation is the token. It is the narrowest byte vector whose concatenation is no
    bottleneck (P · byte_dim >= dim, so the projection can reach every direction of `dim`); wider only
    adds parameters the projection compresses again. At dim 128, P 4 that is 260 · 32 + 128 · 128 =
    24,704 parameters (TextEmbedder's table: 260 · 128 = 33,280). The Linear mixes the patch's bytes,
    which MEGABYTE leaves to the global model's first layer.

    <pad> bytes contribute nothing, whatever the <pad> row holds (it also starts at zero and gets no
    gradient): the last patch of a text embeds only its real bytes, and an all-<pad> token is the zero
    vector. The table is `byte_embed`, deliberately not `token_embed`: its (260, byte_dim) rows are no
    token table that a token-predicting head could tie its (V, dim) decoder to.
    """

    def __init__(self, dim: int, patch_size: int, byte_dim: int | None = None) -> None:
        super().__init__()
        if patch_size < 1 or (byte_dim is not None and byte_dim < 1):
            raise ValueError(
                f"patch_size={patch_size} and byte_dim={byte_dim} must be >= 1; build the embedder with "
                f"ByteTokenizer(patch_size=...).embedder(dim)"
            )
        byte_dim = -(-dim // patch_size) if byte_dim is None else byte_dim  # ceil(dim / P)
        self.dim = dim
        self.patch_size = patch_size
        self.byte_dim = byte_dim
        self.byte_embed = nn.Embedding(VOCAB_SIZE, byte_dim, padding_idx=PAD_ID)
        self.proj = nn.Linear(patch_size * byte_dim, dim, bias=False)
        nn.init.trunc_normal_(self.byte_embed.weight, std=0.02)
        # std 1/√fan_in: a patch of real bytes starts at TextEmbedder's per-element std of 0.02.
        nn.init.trunc_normal_(self.proj.weight, std=(patch_size * byte_dim) ** -0.5)
        with torch.no_grad():
            self.byte_embed.weight[PAD_ID].zero_()

    def to_spec(self) -> BytePatchEmbedderSpec:
        return BytePatchEmbedderSpec(self.patch_size, self.byte_dim)

    @classmethod
    def from_spec(cls, spec: BytePatchEmbedderSpec, dim: int) -> BytePatchEmbedder:
        return cls(dim, spec.patch_size, spec.byte_dim)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        ids = batch["input_ids"]  # (B, N, P)
        check_token_ids(ids, VOCAB_SIZE, "byte", f"bytes and specials are 0-{VOCAB_SIZE - 1}")
        if ids.ndim != 3 or ids.shape[-1] != self.patch_size:
            raise ValueError(
                f"input_ids has shape {tuple(ids.shape)} but BytePatchEmbedder reads (batch, tokens, "
                f"{self.patch_size}); encode with ByteTokenizer(patch_size={self.patch_size})"
            )
        real = ids != PAD_ID  # (B, N, P)
        e = self.byte_embed(ids).masked_fill(~real[..., None], 0.0)  # (B, N, P, byte_dim)
        x = self.proj(e.flatten(2))  # (B, N, P·byte_dim) → (B, N, dim); byte order = concatenation order
        mask = batch.get("attention_mask")
        mask = real.any(-1) if mask is None else mask.bool()  # (B, N): any real byte makes a real token
        return Tokens(x, mask)


register_tokenizer(ByteTokenizer, ByteTokenizerSpec)
register_embedder(BytePatchEmbedder, BytePatchEmbedderSpec)
