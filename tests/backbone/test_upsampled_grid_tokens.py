"""The grid CNNs whose maps shrink (PixelCNN, SpectrogramCNN) normalise and pool at the coarse size, and
must give exactly the tokens of the upsampled map normalised token by token."""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone import TokenGrid
from tabrasa.backbone.conv_blocks import grid_tokens, upsampled_grid_tokens

GRID = TokenGrid(height=13, width=7, prefix=1)  # neither side a multiple of the 4 × 3 factor: a crop
FACTOR = (4, 3)


def upsampled_then_normalised(h: torch.Tensor, mask: torch.Tensor, norm: nn.Module) -> torch.Tensor:
    """The reference: repeat every coarse cell over the token cells it covers, then `grid_tokens`."""
    fine = h.repeat_interleave(FACTOR[0], 2).repeat_interleave(FACTOR[1], 3)[..., : GRID.height, : GRID.width]
    keep = mask[:, GRID.prefix :].reshape(len(h), 1, GRID.height, GRID.width).float()
    return grid_tokens(fine, keep, mask, GRID, norm)


def inputs() -> tuple[torch.Tensor, torch.Tensor, nn.LayerNorm]:
    torch.manual_seed(0)
    h = torch.randn(3, 8, 4, 3)  # (B, D, ⌈13/4⌉, ⌈7/3⌉)
    mask = torch.ones(3, 1 + 13 * 7, dtype=torch.bool)
    mask[1, 1 + 9 * 7 :] = False  # a shorter clip: its last coarse row covers 1 real row of 4
    mask[2, 1 + 2 * 7 :] = False
    norm = nn.LayerNorm(8)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2.0)
        norm.bias.normal_()
    return h, mask, norm


def test_coarse_normalising_and_pooling_equal_the_upsampled_map() -> None:
    h, mask, norm = inputs()
    torch.testing.assert_close(
        upsampled_grid_tokens(h, mask, GRID, FACTOR, norm), upsampled_then_normalised(h, mask, norm)
    )


def test_the_prefix_needs_each_coarse_cell_weighted_by_the_real_tokens_it_covers() -> None:
    """Counter-test: the plain mean of the coarse cells (edge cells cover 1 of 4 rows or of 3 columns)
    gives another prefix token, so the test above would catch a missing weight."""
    h, mask, norm = inputs()
    reference = upsampled_then_normalised(h, mask, norm)
    unweighted = norm(h.mean((2, 3)))  # (B, D), every coarse cell counted once
    assert (unweighted[0] - reference[0, 0]).abs().max() > 1e-3
    assert torch.all(upsampled_grid_tokens(h, mask, GRID, FACTOR, norm)[~mask] == 0)


def test_gradients_agree_too() -> None:
    h, mask, norm = inputs()
    results = []
    for tokens in (upsampled_grid_tokens, None):
        x = h.clone().requires_grad_(True)
        out = tokens(x, mask, GRID, FACTOR, norm) if tokens else upsampled_then_normalised(x, mask, norm)
        results.append(torch.autograd.grad(out.pow(2).sum(), x)[0])
    # float32 sums in another order: each cell's gradient adds up to 12 token gradients
    torch.testing.assert_close(results[0], results[1], atol=1e-4, rtol=1e-4)
