"""What the backbones built from one config dataclass share (Encoder, GAUEncoder, ODEEncoder, Mamba).

A checkpoint's `tabrasa.json` stores the config as a plain dict, so each of them also accepts that dict and
reads it back into its config class here, once, rather than in every constructor.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from torch import nn


class HasWidth(Protocol):
    dim: int


ConfigT = TypeVar("ConfigT", bound=HasWidth)


class ConfiguredBackbone(nn.Module, Generic[ConfigT]):
    """`config` (a `config_class` or the dict a checkpoint stores) as `self.config`, its width as `self.dim`.

    Holds no parameters or submodules, so the subclasses' state-dict names are theirs alone.
    """

    def __init__(self, config: ConfigT | dict[str, Any], config_class: type[ConfigT]) -> None:
        super().__init__()
        self.config: ConfigT = config_class(**config) if isinstance(config, dict) else config
        self.dim = self.config.dim

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
