"""The one registry from a spec's `kind` (as stored in `tabrasa.json`) to the class that builds it.

Every embedder and tokenizer a checkpoint can name carries its own typed spec and `to_spec`/`from_spec`
(see `tabrasa.tokenizers.specs`); nothing else in tabrasa switches on a kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.tokenizers.ast import ASTEmbedder, ASTEmbedderSpec, ASTTokenizer, ASTTokenizerSpec
from tabrasa.tokenizers.audio import AudioEmbedder, AudioEmbedderSpec, AudioTokenizer, AudioTokenizerSpec
from tabrasa.tokenizers.base import Embedder, Tokenizer
from tabrasa.tokenizers.bytes import (
    BytePatchEmbedder,
    BytePatchEmbedderSpec,
    ByteTokenizer,
    ByteTokenizerSpec,
)
from tabrasa.tokenizers.deit import DeitEmbedder, DeitEmbedderSpec
from tabrasa.tokenizers.esm import EsmEmbedder, EsmEmbedderSpec, EsmProteinTokenizer, EsmTokenizerSpec
from tabrasa.tokenizers.image import ImageEmbedder, ImageEmbedderSpec, ImageTokenizer, ImageTokenizerSpec
from tabrasa.tokenizers.protein import (
    ProteinEmbedder,
    ProteinEmbedderSpec,
    ProteinTokenizer,
    ProteinTokenizerSpec,
)
from tabrasa.tokenizers.specs import Spec
from tabrasa.tokenizers.text import TextEmbedder, TextEmbedderSpec, TextTokenizer, TextTokenizerSpec
from tabrasa.tokenizers.whisper import (
    WhisperEmbedder,
    WhisperEmbedderSpec,
    WhisperTokenizer,
    WhisperTokenizerSpec,
)

# (class, its spec) pairs; a spec's `kind` is declared once, on the spec dataclass. ByteTokenizer with one
# byte a token embeds through a plain TextEmbedder; with patches, through BytePatchEmbedder.
EMBEDDERS: dict[str, tuple[type[Embedder], type[Spec]]] = {
    spec.kind: (cls, spec)
    for cls, spec in (
        (TextEmbedder, TextEmbedderSpec),
        (ImageEmbedder, ImageEmbedderSpec),
        (DeitEmbedder, DeitEmbedderSpec),
        (EsmEmbedder, EsmEmbedderSpec),
        (ASTEmbedder, ASTEmbedderSpec),
        (WhisperEmbedder, WhisperEmbedderSpec),
        (ProteinEmbedder, ProteinEmbedderSpec),
        (AudioEmbedder, AudioEmbedderSpec),
        (BytePatchEmbedder, BytePatchEmbedderSpec),
    )
}
TOKENIZERS: dict[str, tuple[type[Tokenizer], type[Spec]]] = {
    spec.kind: (cls, spec)
    for cls, spec in (
        (TextTokenizer, TextTokenizerSpec),
        (ImageTokenizer, ImageTokenizerSpec),
        (EsmProteinTokenizer, EsmTokenizerSpec),
        (ASTTokenizer, ASTTokenizerSpec),
        (WhisperTokenizer, WhisperTokenizerSpec),
        (ProteinTokenizer, ProteinTokenizerSpec),
        (AudioTokenizer, AudioTokenizerSpec),
        (ByteTokenizer, ByteTokenizerSpec),
    )
}


def embedder_spec(data: dict[str, Any]) -> Spec:
    """A spec read back from JSON."""
    return _lookup(EMBEDDERS, data, "embedder")[1].from_json(data)


def tokenizer_spec(data: dict[str, Any] | None) -> Spec | None:
    return None if data is None else _lookup(TOKENIZERS, data, "tokenizer")[1].from_json(data)


def _lookup(
    registry: dict[str, tuple[type, type[Spec]]], data: dict[str, Any], what: str
) -> tuple[type, type[Spec]]:
    kind = data.get("kind")
    if kind not in registry:
        raise ValueError(f"{what} spec kind={kind!r} is not known; expected one of {', '.join(registry)}")
    return registry[kind]


def embedder_class(spec: Spec) -> type[Embedder]:
    return EMBEDDERS[spec.kind][0]


def build_embedder(spec: Spec, dim: int) -> Embedder:
    return EMBEDDERS[spec.kind][0].from_spec(spec, dim)  # type: ignore[attr-defined]


def build_tokenizer(spec: Spec | None, folder: Path) -> Tokenizer | None:
    if spec is None:
        return None
    return TOKENIZERS[spec.kind][0].from_spec(spec, folder)  # type: ignore[attr-defined]
