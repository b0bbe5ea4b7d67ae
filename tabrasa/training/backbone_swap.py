"""A backbone named on the command line replaces the config's whole, whatever family either is.

`tabrasa fit --config configs/text/imdb.yaml --model.init_args.backbone configs/backbone/mamba.yaml` changes
the backbone's class_path. On such a change jsonargparse keeps every init_arg of the old class whose name the
new class also takes, and checks only that top-level name. The configured backbones (Encoder, Mamba,
GAUEncoder, ODEEncoder) all take one dataclass called `config`, so the transformer's `config` (heads, depth,
...) was merged into MambaConfig and parsing failed with "Group 'config' does not accept option 'heads'"
(jsonargparse 4.53; tests/training/test_backbone_swap.py keeps a check of that behaviour, so this goes
when it does). A second config file layered on the first (`--config imdb.yaml --config mine.yaml`) whose
`model` names a backbone meets the same merge.

Naming, just before each backbone given on the command line, and before each later config file that names
a backbone, a class that takes no argument at all makes jsonargparse discard the old init_args; the named
backbone then starts from its own file or defaults only. The placeholder is never built: the backbone
named after it replaces it. A later file that only tunes the backbone (`backbone: {init_args: ...}`, no
class) gets no reset, so its settings still merge into the first file's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from torch import nn

BACKBONE_KEYS = ("--model.backbone", "--model.init_args.backbone")
CONFIG_KEYS = ("--config", "-c")


class ReplacedBackbone(nn.Module):
    """The placeholder a command-line backbone replaces: it takes no argument, so nothing carries over."""


RESET = json.dumps({"class_path": f"{ReplacedBackbone.__module__}.{ReplacedBackbone.__qualname__}"})


def names_backbone(arg: str) -> bool:
    """Whether `arg` sets the whole backbone (`--model.backbone X` or `...=X`), not one of its init_args."""
    return arg in BACKBONE_KEYS or any(arg.startswith(f"{key}=") for key in BACKBONE_KEYS)


def config_names_backbone(path: str) -> bool:
    """Whether the config file at `path` sets `model`'s backbone to a class (a class_path or a file), which
    is what changes a backbone's family; a file that cannot be read is left to the parser to report."""
    try:
        loaded: Any = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return False
    model = loaded.get("model") if isinstance(loaded, dict) else None
    if not isinstance(model, dict):
        return False
    init_args = model.get("init_args")
    backbone = model.get("backbone", init_args.get("backbone") if isinstance(init_args, dict) else None)
    return isinstance(backbone, str) or (isinstance(backbone, dict) and "class_path" in backbone)


def with_backbone_resets(args: list[str]) -> list[str]:
    """`args` with the placeholder named before every whole-backbone setting and every later config file
    that names a backbone (see the module docstring)."""
    out: list[str] = []
    configs_seen = 0
    for index, arg in enumerate(args):
        config = config_path(args, index)
        if names_backbone(arg) or (config is not None and configs_seen and config_names_backbone(config)):
            out += ["--model.init_args.backbone", RESET]
        configs_seen += config is not None
        out.append(arg)
    return out


def config_path(args: list[str], index: int) -> str | None:
    """The file `args[index]` loads when it is `--config FILE`, `-c FILE` or `--config=FILE`, else None."""
    arg = args[index]
    if arg in CONFIG_KEYS:
        return args[index + 1] if index + 1 < len(args) else None
    return arg.split("=", 1)[1] if arg.startswith("--config=") else None
