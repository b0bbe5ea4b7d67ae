"""Mean attention distance and entropy on attention matrices whose answers are known."""

from __future__ import annotations

import math

import numpy as np

from tabrasa.backbone import TokenGrid
from tabrasa.inspect import AttentionMaps, mean_attention_distance, mean_attention_entropy


def test_sequence_distance_in_tokens() -> None:
    n = 4
    skip = np.zeros((n, n))
    for i in range(n):
        skip[i, i] = skip[i, (i + 2) % n] = 0.5  # half on itself, half two tokens away
    uniform = np.full((n, n), 1 / n)  # mean |i - j| over j: 1.5, 1, 1, 1.5
    maps = AttentionMaps([np.stack([skip, uniform])[None]], np.ones((1, n), dtype=bool))
    np.testing.assert_allclose(mean_attention_distance(maps), [[1.0, 1.25]])
    np.testing.assert_allclose(mean_attention_entropy(maps), [[math.log(2), math.log(4)]])


def test_grid_distance_in_pixels_ignores_the_class_token() -> None:
    # CLS + a 2×2 grid of 7-pixel patches, every token attending uniformly to all five.
    w = np.full((1, 1, 5, 5), 0.2)
    maps = AttentionMaps([w], np.ones((1, 5), dtype=bool), TokenGrid(2, 2, prefix=1))
    expected = (0 + 7 + 7 + 7 * math.sqrt(2)) / 4  # from any patch, renormalised over the 4 patches
    np.testing.assert_allclose(mean_attention_distance(maps, patch_size=(7, 7)), [[expected]])
    np.testing.assert_allclose(mean_attention_entropy(maps), [[math.log(5)]])


def test_padding_takes_no_part() -> None:
    w = np.zeros((1, 1, 3, 3))
    w[0, 0, :2, :2] = [[0.5, 0.5], [0.5, 0.5]]  # the third token is padding: zero row and column
    maps = AttentionMaps([w], np.array([[True, True, False]]))
    np.testing.assert_allclose(mean_attention_distance(maps), [[0.5]])
