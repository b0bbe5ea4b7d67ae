"""Every source family by the name a user gives it, and what a family is; nothing is chosen by looking at
the keys. Each family is one small module holding a declarative key map and a config translator (its
`FAMILY`); the registry names the module, which is imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabrasa.errors import UserError
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap

FAMILY_MODULES: dict[str, str] = {
    "bert": "bert",
    "gpt2": "gpt2",
    "vit_hf": "vit_hf",
    "vit_timm": "vit_timm",
    "deit": "deit",
    "dinov2_hf": "dinov2_hf",
    "onnx_dinov2": "onnx_dinov2",
    "roberta": "roberta",
    "esm2": "esm2",
    "esm2_fair": "esm2_fair",
    "ast": "ast_audio",
    "whisper": "whisper_hf",
    "whisper_ct2": "whisper_ct2",
    "tabrasa": "tabrasa_format",
}
FAMILIES = tuple(FAMILY_MODULES)


def get_family(name: str) -> Family:
    if name not in FAMILY_MODULES:
        raise ValueError(f"pretrained family {name!r} is not known; choose one of {', '.join(FAMILIES)}")
    family: Family = importlib.import_module(f"tabrasa.pretrained.{FAMILY_MODULES[name]}").FAMILY
    return family


Translate = Callable[[dict[str, Any], Path], PretrainedConfig]


@dataclass(frozen=True)
class Family:
    """name: what a user writes (`family: bert`); it must be the module's key in FAMILY_MODULES.
    key_map: source keys → `encoder.*` / `embedder.*` (None: the source already uses tabrasa's names).
    translate: the source's config (config.json) and folder → PretrainedConfig.
    export_config: PretrainedConfig → the source's config.json (None: export writes weights only).
    reader: the family's own file format (CTranslate2's model.bin, an ONNX graph).
    key_map_for: the key map of one checkpoint, where a number in its config enters the map (RoBERTa's
        padding index, timm's class token outside the position table); replaces `key_map` when given.
    infer_config: the source's config from its tensors, for formats that carry none (an ONNX graph).
    """

    name: str
    key_map: KeyMap | None
    translate: Translate
    export_config: Callable[[PretrainedConfig], dict[str, Any]] | None = None
    config_file: str = "config.json"
    reader: Callable[[Path], dict[str, Any]] | None = None
    key_map_for: Callable[[PretrainedConfig], KeyMap] | None = None
    infer_config: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def keys(self, config: PretrainedConfig) -> KeyMap | None:
        """The key map for a checkpoint with this translated config."""
        return self.key_map_for(config) if self.key_map_for is not None else self.key_map


def require(config: dict[str, Any], key: str, family: str) -> Any:
    """A config field the translation cannot do without; its absence is the user's to fix (the checkpoint
    is another family's, or a config given by hand lacks it)."""
    if key not in config:
        raise UserError(
            f"{family} config has no {key!r}; is this a {family} checkpoint's config.json? Name the family "
            f"that wrote it, or add {key!r} to the config given"
        )
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


def hf_activation(name: str) -> str:
    """tabrasa's activation → the Hugging Face name `activation` reads back to it."""
    return {"gelu_tanh": "gelu_new"}.get(name, name)
