"""What every backbone is: a width and tokens (B, N, D) + mask (B, N) → contextual tokens (B, N, D).

The transformer Encoder and the CNN and LSTM baselines all satisfy it, and so does any module a user
writes with a `dim` attribute and this `forward`; tasks depend on this, never on a concrete class.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch

from tabrasa.backbone.tokens import TokenGrid


@runtime_checkable
class Backbone(Protocol):
    """dim: token width in and out. forward: x float (B, N, dim), mask bool (B, N) True at real tokens
    (None = all real), grid: where tokens lie on a patch grid (None for sequences) → (B, N, dim).

    isinstance(module, Backbone) checks that both members exist, not their signatures.
    """

    dim: int

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor: ...


def check_tokens(name: str, x: torch.Tensor, mask: torch.Tensor | None, dim: int) -> None:
    """The Backbone contract's input checks, each a one-line error naming the input and the fix."""
    if x.ndim != 3 or x.shape[-1] != dim:
        raise ValueError(
            f"{name} input x has shape {tuple(x.shape)}; expected (batch, tokens, {dim}). Embed raw inputs "
            f"with a tabrasa.tokenizers embedder first"
        )
    if not x.is_floating_point():
        raise TypeError(f"{name} input x has dtype {x.dtype}; expected a float tensor of token vectors")
    if x.shape[1] == 0:
        raise ValueError(f"{name} input x has 0 tokens; every sequence needs at least one token")
    if mask is not None and (mask.dtype != torch.bool or mask.shape != x.shape[:2]):
        raise ValueError(
            f"{name} mask has dtype {mask.dtype} and shape {tuple(mask.shape)}; expected bool "
            f"{tuple(x.shape[:2])} (True at real tokens) to match x"
        )
