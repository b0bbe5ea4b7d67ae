"""One fixed, seeded permutation of positions: the permutation test of Perceiver (Jaegle et al. 2021).

The Perceiver paper shuffles ImageNet's pixels by one fixed random permutation, the same for every image in
training and test: ResNet-50 falls from 73.5% to 39.4% top-1 while the Perceiver, which assumes no
grid, is unchanged. Here the same idea works at two levels: raw elements inside a tokenizer (pixels,
spectrogram cells: `permute_cells`) and the token sequence the backbone sees (`token_permutation.py`).

Every position p gets a key drawn from the seed, and the permutation is the order of the keys. Keys come in
blocks of `BLOCK` positions, each block from its own generator, so position p's key does not depend on how
many positions are asked for: sorting the keys of any prefix 0..n-1 gives the order the full permutation
induces on it. That is what lets variable-length sequences share one permutation.
"""

from __future__ import annotations

import functools

import torch

BLOCK = 4096  # positions per generator block; keys of a block are one torch.rand call
MAX_SEED = 2**40  # seed · 2^20 + block stays inside the generator's 64-bit seed


def check_seed(seed: object, setting: str) -> int:
    """`seed` as a permutation seed, or a ValueError naming `setting` and the fix."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < MAX_SEED:
        raise ValueError(
            f"{setting}={seed!r} is not a permutation seed; give an integer in [0, 2**40) (the same seed "
            f"gives the same permutation in training, evaluation and after reloading), or null for none"
        )
    return seed


@functools.lru_cache(maxsize=64)
def _keys(seed: int, n: int) -> torch.Tensor:
    blocks = []
    for block in range(-(-n // BLOCK)):
        generator = torch.Generator().manual_seed(seed * 2**20 + block)
        blocks.append(torch.rand(BLOCK, generator=generator, dtype=torch.float64))
    return torch.cat(blocks)[:n] if blocks else torch.zeros(0, dtype=torch.float64)


def position_keys(seed: int, n: int) -> torch.Tensor:
    """Keys in [0, 1) of positions 0..n-1, float64 (n,): key p is the same for every n > p."""
    return _keys(check_seed(seed, "seed"), n).clone()


@functools.lru_cache(maxsize=64)
def _permutation(seed: int, n: int) -> torch.Tensor:
    return torch.argsort(_keys(seed, n), stable=True)


def fixed_permutation(seed: int, n: int) -> torch.Tensor:
    """The permutation of n positions that `seed` names, as gather indices (n,): out[j] = in[perm[j]]."""
    return _permutation(check_seed(seed, "seed"), n).clone()


def permute_cells(x: torch.Tensor, seed: int) -> torch.Tensor:
    """x (..., H, W) with its H·W cells moved by one fixed permutation, the same for every leading index
    (every channel, every example of a batch): a bijection of positions, so the values stay the same
    multiset and `unpermute_cells` undoes it."""
    *lead, h, w = x.shape
    perm = _permutation(check_seed(seed, "seed"), h * w).to(x.device)
    return x.reshape(*lead, h * w)[..., perm].reshape(x.shape)


def unpermute_cells(x: torch.Tensor, seed: int) -> torch.Tensor:
    """The inverse of `permute_cells` with the same seed."""
    *lead, h, w = x.shape
    perm = _permutation(check_seed(seed, "seed"), h * w).to(x.device)
    out = torch.empty_like(x.reshape(*lead, h * w))
    out[..., perm] = x.reshape(*lead, h * w)
    return out.reshape(x.shape)
