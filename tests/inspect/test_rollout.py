"""Attention rollout (Abnar & Zuidema 2020) on a 2-layer example worked by hand."""

from __future__ import annotations

import numpy as np

from tabrasa.backbone import TokenGrid
from tabrasa.inspect import AttentionMaps, attention_rollout, grid_rollout


def test_two_layers_by_hand() -> None:
    # Layer 1, two heads averaging to [[1, 0], [0.5, 0.5]]; with the identity: [[1, 0], [0.25, 0.75]].
    layer1 = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])
    # Layer 2, one head swapping the tokens; with the identity: every row [0.5, 0.5].
    layer2 = np.array([[[0.0, 1.0], [1.0, 0.0]]])
    rollout = attention_rollout([layer1, layer2])
    # R = Â2 · Â1 = [[0.5·1 + 0.5·0.25, 0.5·0 + 0.5·0.75]] in both rows.
    np.testing.assert_allclose(rollout, [[0.625, 0.375], [0.625, 0.375]])


def test_layer_order_matters() -> None:
    layer1 = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])
    layer2 = np.array([[[0.0, 1.0], [1.0, 0.0]]])
    assert not np.allclose(attention_rollout([layer1, layer2]), attention_rollout([layer2, layer1]))


def test_grid_rollout_reads_the_class_token_row() -> None:
    # CLS + 1×2 grid; one layer where CLS attends only to the second patch.
    w = np.zeros((1, 1, 3, 3))
    w[0, 0] = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    maps = AttentionMaps([w], np.ones((1, 3), dtype=bool), TokenGrid(1, 2, prefix=1))
    np.testing.assert_allclose(grid_rollout(maps), [[0.0, 0.5]])
