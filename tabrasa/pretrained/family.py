"""A source family: its key map onto tabrasa, its config translator, and what it needs to write back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap
from tabrasa.tokenizers.base import Embedder

Translate = Callable[[dict[str, Any], Path], PretrainedConfig]


@dataclass(frozen=True)
class Family:
    """name: what a user writes (`family: bert`). key_map: source keys → `encoder.*` / `embedder.*`
        (None: the source already uses tabrasa's names).
    translate: the source's config (config.json) and folder → PretrainedConfig.
    embedder_type: the embedder class that reproduces the source's input side; loading the family's
        embedder weights into anything else is refused rather than silently changing the function.
    export_config: PretrainedConfig → the source's config.json (None: export writes weights only).
    """

    name: str
    key_map: KeyMap | None
    translate: Translate
    embedder_type: type[Embedder]
    export_config: Callable[[PretrainedConfig], dict[str, Any]] | None = None
    config_file: str = "config.json"


def require(config: dict[str, Any], key: str, family: str) -> Any:
    """A config field the translation cannot do without."""
    if key not in config:
        raise KeyError(f"{family} config has no {key!r}; is this a {family} checkpoint's config.json?")
    return config[key]


def refuse(condition: bool, family: str, what: str) -> None:
    """A variant of the family that the tabrasa backbone cannot reproduce exactly."""
    if condition:
        raise ValueError(
            f"{family}: {what} is not supported by the tabrasa backbone, so it cannot load exactly"
        )


def mlp_ratio(hidden: int, dim: int, family: str) -> float:
    """Feed-forward width as a ratio whose int(dim · ratio) gives back exactly `hidden`."""
    ratio = hidden / dim
    refuse(int(dim * ratio) != hidden, family, f"feed-forward width {hidden} for dim {dim}")
    return ratio


def activation(name: str, family: str) -> str:
    """Hugging Face activation names → tabrasa's."""
    names = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}
    names |= {"silu": "silu", "swish": "silu"}
    refuse(name not in names, family, f"activation {name!r}")
    return names[name]
