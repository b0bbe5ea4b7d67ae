"""Inspection: where a model attends, per layer and head, for every modality.

    from tabrasa.inspect import attention_maps, attention_rollout, mean_attention_distance
    maps = attention_maps(model, None, batch)           # a task, a pretrained model or an Encoder
    maps.weights[layer]                                 # (B, H, N, N), 0 at padding
    attention_rollout(maps.weights)                     # (B, N, N), Abnar & Zuidema 2020
    mean_attention_distance(maps, patch_size=(7, 7))    # (L, H) in pixels (tokens for sequences)

`tabrasa inspect` (tabrasa/cli/inspect.py) draws the same for one raw input.
"""

from tabrasa.inspect.capture import AttentionMaps, attention_maps
from tabrasa.inspect.locality import (
    attention_distance,
    attention_entropy,
    mean_attention_distance,
    mean_attention_entropy,
)
from tabrasa.inspect.rollout import attention_rollout, grid_rollout

__all__ = [
    "AttentionMaps",
    "attention_distance",
    "attention_entropy",
    "attention_maps",
    "attention_rollout",
    "grid_rollout",
    "mean_attention_distance",
    "mean_attention_entropy",
]
