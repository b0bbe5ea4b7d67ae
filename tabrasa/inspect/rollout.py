"""Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers").

One layer's weights say where a token reads from in the layer below, not in the input. Rollout follows the
reading through every layer: average the heads, add the identity for the residual connection (a token also
keeps itself), renormalise each row, and multiply the layers: R = Â_L ··· Â_2 Â_1, with
Â_l = rownorm(0.5 · mean_h A_l + 0.5 · I). Row i of R is how much of each input token reaches token i.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tabrasa.inspect.capture import AttentionMaps


def attention_rollout(weights: Sequence[np.ndarray], residual: float = 0.5) -> np.ndarray:
    """weights: per layer, first to last, (..., H, N, N) → rollout (..., N, N).

    residual: the identity's share (0.5 as in the paper). Padded rows (all 0 in the weights) stay
    identity rows, so they mix nothing into real tokens.
    """
    if not weights:
        raise ValueError("attention rollout needs the weights of at least one layer")
    n = weights[0].shape[-1]
    eye = np.eye(n)
    rollout = np.broadcast_to(eye, (*weights[0].shape[:-3], n, n)).copy()
    for layer in weights:
        mixed = (1.0 - residual) * layer.mean(axis=-3) + residual * eye  # (..., N, N)
        mixed = mixed / mixed.sum(axis=-1, keepdims=True)
        rollout = mixed @ rollout  # the later layer reads what the earlier ones gathered
    return rollout


def grid_rollout(maps: AttentionMaps, index: int = 0) -> np.ndarray:
    """Example `index`'s rollout on its patch grid, (rows, cols): what share of the class token's output
    (the first token after any registers) comes from each patch. Without a class token, the mean over the
    real patches' rows: how much each patch reaches the pooled output."""
    if maps.grid is None:
        raise ValueError("grid_rollout needs tokens on a patch grid (images, spectrogram patches)")
    grid, p = maps.grid, maps.grid.prefix
    rollout = attention_rollout([w[index] for w in maps.weights])  # (N, N)
    if p > maps.registers:
        heat = rollout[maps.registers, p:]
    else:
        real = maps.mask[index, p:]
        heat = rollout[p:, p:][real].mean(axis=0)
    return heat.reshape(grid.height, grid.width)
