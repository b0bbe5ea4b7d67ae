"""The position-wise feed-forward sublayer: Linear → activation → dropout → Linear."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.config import Activation

_ACTIVATIONS: dict[str, type[nn.Module] | tuple[type[nn.Module], dict[str, str]]] = {
    "gelu": (nn.GELU, {"approximate": "none"}),
    "gelu_tanh": (nn.GELU, {"approximate": "tanh"}),
    "relu": nn.ReLU,
    "silu": nn.SiLU,
}


def make_activation(name: Activation) -> nn.Module:
    spec = _ACTIVATIONS[name]
    if isinstance(spec, tuple):
        cls, kwargs = spec
        return cls(**kwargs)
    return spec()


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int, activation: Activation, dropout: float, bias: bool) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, bias=bias)
        self.act = make_activation(activation)
        self.fc2 = nn.Linear(hidden, dim, bias=bias)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(self.act(self.fc1(x))))
