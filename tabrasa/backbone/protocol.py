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
