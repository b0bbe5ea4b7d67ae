"""A backbone named on the command line replaces the config's whole, whatever family either is.

`tabrasa fit --config configs/text/imdb.yaml --model.init_args.backbone configs/backbone/mamba.yaml` changes
the backbone's class_path. On such a change jsonargparse keeps every init_arg of the old class whose name the
new class also takes, and checks only that top-level name. The configured backbones (Encoder, Mamba,
GAUEncoder, ODEEncoder) all take one dataclass called `config`, so the transformer's `config` (heads, depth,
...) was merged into MambaConfig and parsing failed with "Group 'config' does not accept option 'heads'"
(jsonargparse 4.53; tests/training/test_backbone_swap.py keeps a check of that behaviour, so this goes
when it does). A config file layered on another that changes the backbone class is not covered.

Naming, just before each backbone given on the command line, a class that takes no argument at all makes
jsonargparse discard the old init_args; the named backbone then starts from its own file or defaults only.
The placeholder is never built: the backbone named after it replaces it.
"""

from __future__ import annotations

import json

from torch import nn

BACKBONE_KEYS = ("--model.backbone", "--model.init_args.backbone")


class ReplacedBackbone(nn.Module):
    """The placeholder a command-line backbone replaces: it takes no argument, so nothing carries over."""


RESET = json.dumps({"class_path": f"{ReplacedBackbone.__module__}.{ReplacedBackbone.__qualname__}"})


def names_backbone(arg: str) -> bool:
    """Whether `arg` sets the whole backbone (`--model.backbone X` or `...=X`), not one of its init_args."""
    return arg in BACKBONE_KEYS or any(arg.startswith(f"{key}=") for key in BACKBONE_KEYS)


def with_backbone_resets(args: list[str]) -> list[str]:
    """`args` with the placeholder named before every whole-backbone setting (see the module docstring)."""
    out: list[str] = []
    for arg in args:
        if names_backbone(arg):
            out += ["--model.init_args.backbone", RESET]
        out.append(arg)
    return out
