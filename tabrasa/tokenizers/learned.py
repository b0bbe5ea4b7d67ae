"""Tokenizers that learn part of themselves from training inputs: a subword vocabulary, per-bin feature
statistics. The data module supplies the data; the tokenizer decides what it learns and how.

The exchange is one method, `fit(inputs, cache)`, that a data module calls when its tokenizer is first
used (`BaseDataModule.tokenizer`). The module names the cache file from its own data settings and the
tokenizer's `learned_settings()`, so a second run on the same data and settings reads what the first one
learned. The tokenizer loads `cache` when it exists, and otherwise calls `inputs()` (the training split's
raw inputs, as `encode` takes them), learns from them and writes `cache`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tabrasa.errors import UserError


@runtime_checkable
class LearnsFromData(Protocol):
    """A tokenizer fitted on a data module's training inputs before it encodes anything."""

    @property
    def fitted(self) -> bool:
        """True once learned, or from the start when it was given what it would learn (a vocabulary file)."""
        ...

    def learned_settings(self) -> dict[str, Any]:
        """The settings what it learns depends on besides the data: part of the cache file's key."""
        ...

    def fit(self, inputs: Callable[[], Iterable[Any]], cache: Path) -> None:
        """Load what was learned from `cache`; without one, learn from `inputs()` and write `cache`."""
        ...


class NotFittedError(UserError, AttributeError):
    """A part of a tokenizer that `fit` learns, asked for before it was fitted. An AttributeError too, so
    `getattr(tokenizer, name, default)` and `hasattr` still answer for an unfitted tokenizer."""


def not_fitted(tokenizer: object, name: str) -> AttributeError:
    """What an unfitted tokenizer's `__getattr__` raises for `name`: dunder look-ups (copy, pickle) get
    the plain AttributeError they expect, every other name the error that says how to fit it."""
    if name.startswith("__"):
        return AttributeError(name)
    kind = type(tokenizer).__name__
    return NotFittedError(
        f"{kind}.{name} is learned from the training data and {kind} is not fitted yet: hand it to a data "
        f"module as its tokenizer (the module fits it when the tokenizer is first used), or call "
        f"fit(inputs, cache) yourself"
    )
