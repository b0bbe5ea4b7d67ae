"""How far and how widely attention reaches, per layer and head.

Mean attention distance (Dosovitskiy et al. 2021, ViT §4.5 and Fig. 7): for each query, the distance to
each key weighted by the attention it pays that key, averaged over queries; in pixels for image patches
(patch centres, grid step × patch size), in tokens for sequences. Heads that attend near are local, like a
convolution's kernel; far-reaching ones integrate the whole input. Entropy (nats) of each query's weights:
0 is one key only, log n is uniform over n keys.
"""

from __future__ import annotations

import numpy as np

from tabrasa.inspect.capture import AttentionMaps


def token_coordinates(
    maps: AttentionMaps, patch_size: tuple[int, int] = (1, 1)
) -> tuple[np.ndarray, np.ndarray]:
    """(N, 2) coordinates of the encoder's tokens and (N,) whether each has a place.

    Grid tokens: (row · patch height, column · patch width). Sequences: (index, 0), registers excluded.
    Prefix tokens (CLS, registers) have no place on the grid and take no part in distances.
    """
    n = maps.mask.shape[1]
    coords = np.zeros((n, 2))
    placed = np.ones(n, dtype=bool)
    if maps.grid is None:
        coords[:, 0] = np.arange(n) - maps.registers
        placed[: maps.registers] = False
        return coords, placed
    grid, p = maps.grid, maps.grid.prefix
    rows, cols = np.divmod(np.arange(grid.size), grid.width)
    coords[p:, 0], coords[p:, 1] = rows * patch_size[0], cols * patch_size[1]
    placed[:p] = False
    return coords, placed


def attention_distance(
    weights: np.ndarray, coords: np.ndarray, query_ok: np.ndarray, key_ok: np.ndarray
) -> np.ndarray:
    """weights (B, H, N, N), coords (N, 2), query_ok and key_ok (B, N) → mean distance per head (H,).

    Each query's weights are renormalised over the keys that count (real and placed), so attention to CLS
    or registers, which have no place, neither shortens nor lengthens the distance.
    """
    dist = np.linalg.norm(coords[:, None, :] - coords[None, :, :], axis=-1)  # (N, N)
    w = np.abs(weights) * key_ok[:, None, None, :]  # abs: low-rank's effective weights may be negative
    total = w.sum(axis=-1)  # (B, H, N)
    per_query = (w * dist).sum(axis=-1) / np.where(total > 0, total, 1.0)  # (B, H, N)
    counted = query_ok[:, None, :] & (total > 0)
    return (per_query * counted).sum(axis=(0, 2)) / np.maximum(counted.sum(axis=(0, 2)), 1)


def attention_entropy(weights: np.ndarray, query_ok: np.ndarray) -> np.ndarray:
    """weights (B, H, N, N), query_ok (B, N) → mean entropy (nats) of the real queries' rows per head (H,)."""
    p = np.abs(weights)
    p = p / np.maximum(p.sum(axis=-1, keepdims=True), 1e-12)
    entropy = -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=-1)  # (B, H, N)
    counted = np.broadcast_to(query_ok[:, None, :], entropy.shape)
    return (entropy * counted).sum(axis=(0, 2)) / np.maximum(counted.sum(axis=(0, 2)), 1)


def mean_attention_distance(maps: AttentionMaps, patch_size: tuple[int, int] = (1, 1)) -> np.ndarray:
    """Mean attention distance per layer and head, (L, H); units: `patch_size` pixels per grid step,
    tokens for sequences."""
    coords, placed = token_coordinates(maps, patch_size)
    ok = maps.mask & placed[None, :]
    return np.stack([attention_distance(w, coords, ok, ok) for w in maps.weights])


def mean_attention_entropy(maps: AttentionMaps) -> np.ndarray:
    """Attention entropy in nats per layer and head, (L, H), over every real query (CLS included)."""
    return np.stack([attention_entropy(w, maps.mask) for w in maps.weights])
