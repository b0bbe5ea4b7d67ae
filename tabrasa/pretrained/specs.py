"""From a spec's `kind` (as stored in `tabrasa.json`) to the class that builds it.

Every embedder and tokenizer a checkpoint can name carries its own typed spec and `to_spec`/`from_spec`
and registers the pair in its own module (`tabrasa.tokenizers.specs`); nothing else in tabrasa switches on
a kind. This module makes sure every built-in one is registered before a checkpoint is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Every built-in tokenizer module, imported for what it registers: its classes and their spec kinds.
import tabrasa.tokenizers.ast
import tabrasa.tokenizers.audio
import tabrasa.tokenizers.bytes
import tabrasa.tokenizers.deit
import tabrasa.tokenizers.esm
import tabrasa.tokenizers.image
import tabrasa.tokenizers.protein
import tabrasa.tokenizers.text
import tabrasa.tokenizers.whisper  # noqa: F401
from tabrasa.tokenizers.base import Embedder, Tokenizer
from tabrasa.tokenizers.specs import EMBEDDER_KINDS, TOKENIZER_KINDS, Spec

# kind → (class, its spec); each tokenizer module fills these where it defines the classes, so a tokenizer
# of your own is readable from a checkpoint once its module is imported.
EMBEDDERS: dict[str, tuple[type[Embedder], type[Spec]]] = EMBEDDER_KINDS
TOKENIZERS: dict[str, tuple[type[Tokenizer], type[Spec]]] = TOKENIZER_KINDS


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
        raise ValueError(
            f"{what} spec kind={kind!r} is not known; expected one of {', '.join(sorted(registry))}. A "
            f"tokenizer of your own registers its kind when its module is imported: import it before loading"
        )
    return registry[kind]


def embedder_class(spec: Spec) -> type[Embedder]:
    return EMBEDDERS[spec.kind][0]


def build_embedder(spec: Spec, dim: int) -> Embedder:
    return EMBEDDERS[spec.kind][0].from_spec(spec, dim)  # type: ignore[attr-defined]


def build_tokenizer(spec: Spec | None, folder: Path) -> Tokenizer | None:
    if spec is None:
        return None
    return TOKENIZERS[spec.kind][0].from_spec(spec, folder)  # type: ignore[attr-defined]
