"""Fitting a pretrained position table to a backbone of another length or grid, only when asked.

Loaders that slice or pad a table to fit without saying so hand the model positions it never learned. Here
a table of another size is an error naming the fix, unless the user asked to resample:
grids (ViT, AST): timm's `resample_abs_pos_embed`, bicubic over the patch grid, prefix rows (CLS) kept;
sequences: a shorter table keeps the first rows (exact for every sequence that fits); a longer one is a
linear interpolation of the old table (the approximation, Dosovitskiy et al. 2021 did the same in 2-D).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tabrasa.pretrained.config import PretrainedConfig


def target_grid(rows: int, config: PretrainedConfig, asked: tuple[int, int] | None) -> tuple[int, int]:
    """The grid a table of `rows` rows covers after the prefix: the one asked for, else a square one."""
    cells = rows - config.prefix_tokens
    if asked is not None:
        grid = (int(asked[0]), int(asked[1]))
        if grid[0] * grid[1] != cells:
            raise ValueError(
                f"grid={grid} has {grid[0] * grid[1]} patches, but the backbone's max_len={rows} leaves "
                f"{cells} after {config.prefix_tokens} prefix tokens"
            )
        return grid
    side = math.isqrt(max(cells, 0))
    if side * side != cells:
        raise ValueError(
            f"the backbone's max_len={rows} leaves {cells} patches after {config.prefix_tokens} prefix "
            f"tokens, which is not a square grid; give grid=(rows, cols) in the pretrained source"
        )
    return side, side


def fit_positions(
    table: torch.Tensor,
    rows: int,
    config: PretrainedConfig,
    resample: bool,
    grid: tuple[int, int] | None = None,
) -> torch.Tensor:
    """`table` (N, D) from the checkpoint → (rows, D) for the backbone, or an error saying how to ask."""
    if table.shape[0] == rows and grid in (None, config.grid):
        return table
    if not resample:
        kind = f"a {config.grid[0]}x{config.grid[1]} patch grid" if config.grid else "a sequence"
        raise ValueError(
            f"the checkpoint's position table has {table.shape[0]} rows ({kind}) but the backbone's "
            f"max_len is {rows}. Set the backbone's max_len to {table.shape[0]} (and the input size to "
            f"match), or ask for resampling: resample_positions: true in the pretrained block "
            f"(PretrainedSource(..., resample_positions=True), load_pretrained(..., resample_positions=True))"
        )
    if config.grid is not None:
        return _resample_grid(table, config, target_grid(rows, config, grid))
    if rows <= table.shape[0]:
        return table[:rows].clone()
    return F.interpolate(table.T[None], size=rows, mode="linear", align_corners=True)[0].T.contiguous()


def _resample_grid(table: torch.Tensor, config: PretrainedConfig, new: tuple[int, int]) -> torch.Tensor:
    from timm.layers import resample_abs_pos_embed

    assert config.grid is not None
    out = resample_abs_pos_embed(
        table[None], new_size=list(new), old_size=list(config.grid), num_prefix_tokens=config.prefix_tokens
    )
    return out[0].contiguous()
