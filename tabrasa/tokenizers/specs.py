"""Typed specs: the numbers that rebuild an embedder or a tokenizer, as a checkpoint stores them.

Each embedder and tokenizer that a checkpoint can name has a spec dataclass beside it and a
`to_spec()` / `from_spec()` pair, so a converted checkpoint's `tabrasa.json` rebuilds both halves of its
tokenizer without the source library. On disk a spec is its fields plus a `kind`; the registries below
map a kind back to its class. Each tokenizer module registers its own classes where it defines them, so
adding a tokenizer stays one file: importing that module is what makes its checkpoints readable
(`tabrasa.pretrained.specs` imports every built-in one).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Self

Grid = tuple[int, int]


class Spec:
    """Base of every spec dataclass. `kind` names the class in JSON; lists come back as tuples."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}  # type: ignore[call-overload]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - names - {"kind"})
        if unknown:
            raise ValueError(
                f"{cls.__name__} has no field(s) {unknown}; the checkpoint was written by another version"
            )
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "kind"})

    def fitted(self, max_len: int, grid: Grid | None) -> Self:
        """This spec for a backbone whose positions were fitted to `max_len` rows (and patch `grid`):
        input sizes that follow from the position table change, nothing else. Default: unchanged."""
        return self

    def files(self) -> list[str]:
        """Files beside the weights that this spec reads (convert and export copy them)."""
        return []


# kind → (class, its spec), one registry for tokenizers and one for embedders (the two share kind names:
# "text" is a tokenizer and an embedder).
TOKENIZER_KINDS: dict[str, tuple[type, type[Spec]]] = {}
EMBEDDER_KINDS: dict[str, tuple[type, type[Spec]]] = {}


def _register(registry: dict[str, tuple[type, type[Spec]]], cls: type, spec: type[Spec], what: str) -> None:
    known = registry.setdefault(spec.kind, (cls, spec))
    if known != (cls, spec):
        raise ValueError(
            f"{what} spec kind {spec.kind!r} of {cls.__name__} is already {known[0].__name__}'s; give "
            f"{spec.__name__} a kind of its own"
        )


def register_tokenizer(cls: type, spec: type[Spec]) -> None:
    """Make checkpoints that name `spec.kind` rebuild `cls` (via `cls.from_spec(spec, folder)`)."""
    _register(TOKENIZER_KINDS, cls, spec, "tokenizer")


def register_embedder(cls: type, spec: type[Spec]) -> None:
    """Make checkpoints that name `spec.kind` rebuild `cls` (via `cls.from_spec(spec, dim)`)."""
    _register(EMBEDDER_KINDS, cls, spec, "embedder")


def grid_size(grid: Grid, patch: Grid, stride: Grid | None = None) -> Grid:
    """The input size whose patches (of `patch`, every `stride`) form `grid`: the inverse of cutting."""
    step = stride or patch
    return (grid[0] - 1) * step[0] + patch[0], (grid[1] - 1) * step[1] + patch[1]
