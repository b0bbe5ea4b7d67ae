"""Register tokens (Darcet et al. 2024, "Vision Transformers Need Registers"): R learned tokens that join
every sequence, give attention somewhere to store global information other than the patch tokens
(whose attention maps otherwise show high-norm artefacts), and are dropped from the output.

They join after positions are added, so they carry no position, as in DINOv2-reg and timm
(`no_embed_class`). They are placed before the input tokens: under full attention the order of tokens
does not matter (attention without a causal mask is permutation-equivariant, so this equals timm's
cls, registers, patches), and leading registers keep every input token at the same offset whatever the
padding, so low-rank projections see them in fixed columns, local attention treats them as global tokens
and axial attention as grid prefix.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from tabrasa.backbone.tokens import TokenGrid


def prepend_registers(
    registers: torch.Tensor, x: torch.Tensor, mask: torch.Tensor | None, grid: TokenGrid | None
) -> tuple[torch.Tensor, torch.Tensor | None, TokenGrid | None]:
    """registers (1, R, D), x (B, N, D), mask (B, N) → x (B, R+N, D), mask (B, R+N), grid with R more prefix.

    Registers are always real (mask True): a sequence whose tokens are all padding still attends to them.
    """
    B, R = x.shape[0], registers.shape[1]
    x = torch.cat((registers.expand(B, -1, -1).to(x.dtype), x), dim=1)  # (B, R+N, D)
    if mask is not None:
        mask = torch.cat((mask.new_ones(B, R), mask), dim=1)  # (B, R+N)
    if grid is not None:
        grid = replace(grid, prefix=grid.prefix + R)
    return x, mask, grid
