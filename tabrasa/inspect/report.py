"""Inspect one raw input: capture the attention, draw it for the modality, write the numbers.

Writes into `out`: attention.npz (per layer, (H, n, n) over the n real tokens), summary.json (tokens, mean
attention distance and entropy per layer and head), locality.png (both across layers), and rollout.png
(image, audio: rollout over the input) or attention_tokens.png (text, protein: token-to-token heatmaps).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tabrasa.errors import UserError
from tabrasa.inspect.capture import AttentionMaps, attention_maps
from tabrasa.inspect.inputs import read_input
from tabrasa.inspect.locality import mean_attention_distance, mean_attention_entropy
from tabrasa.inspect.plots import (
    plot_image_rollout,
    plot_locality,
    plot_spectrogram_rollout,
    plot_token_heatmaps,
)
from tabrasa.inspect.rollout import grid_rollout
from tabrasa.inspect.source import Inspected
from tabrasa.tokenizers.base import Batch, Tokenizer, in_mode


def encode_input(model: Inspected, value: str) -> Batch:
    """`value` read for the model's modality and encoded as a batch of one, without augmentation."""
    tokenizer = in_mode(model.tokenizer, False)
    raw = read_input(value, model.modality, channels=getattr(tokenizer, "channels", 3))
    try:
        return tokenizer.collate([tokenizer(raw)])
    except (ValueError, TypeError, KeyError) as error:
        raise UserError(
            f"input {value[:60]!r} cannot be encoded for this {model.modality} model: {error}"
        ) from error


def inspect_input(model: Inspected, value: str, out: str | Path) -> dict[str, Any]:
    """Capture, draw and write (see the module docstring); returns the summary written to summary.json."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    batch = encode_input(model, value)
    maps = attention_maps(model.encoder, model.embedder, batch, model.tokenizer)
    patch, unit = distance_unit(model.tokenizer, model.modality)
    distance, entropy = mean_attention_distance(maps, patch), mean_attention_entropy(maps)
    np.savez_compressed(out / "attention.npz", **{f"layer_{i + 1}": w for i, w in enumerate(maps.example(0))})
    files = [out / "attention.npz", _draw(model, batch, maps, out)]
    title = f"{model.name}: {value if len(value) < 50 else value[:47] + '...'}"
    files.append(plot_locality(distance, entropy, unit, out / "locality.png", title))
    summary = {
        "model": model.name,
        "modality": model.modality,
        "input": value,
        "tokens": maps.example_labels(0),
        "registers": maps.registers,
        "distance_unit": unit,
        "mean_attention_distance": np.round(distance, 4).tolist(),
        "attention_entropy_nats": np.round(entropy, 4).tolist(),
        "files": [f.name for f in files] + ["summary.json"],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def distance_unit(tokenizer: Tokenizer, modality: str) -> tuple[tuple[int, int], str]:
    """One grid step in input units, and their name: pixels for images, spectrogram bins (frames × mel
    bins) for audio patches, frames for audio frame tokens, tokens or residues for sequences."""
    patch = getattr(tokenizer, "patch_size", None)
    if modality == "image" and patch is not None:
        return (int(patch[0]), int(patch[1])), "pixels"
    if modality == "audio":
        if patch is None:
            return (1, 1), "frames"
        return (int(patch[0]), int(patch[1])), "spectrogram bins"
    return (1, 1), "residues" if modality == "protein" else "tokens"


def _draw(model: Inspected, batch: Batch, maps: AttentionMaps, out: Path) -> Path:
    if model.modality == "image" and maps.grid is not None:
        return plot_image_rollout(_displayable(batch["pixels"][0]), grid_rollout(maps), out / "rollout.png")
    if model.modality == "audio" and maps.grid is not None and "features" in batch:
        features = batch["features"][0].float().numpy()  # (frames, mel bins)
        heat = grid_rollout(maps)  # (time rows, frequency columns)
        return plot_spectrogram_rollout(features, heat, out / "rollout.png")
    layers = [w.mean(axis=0) for w in maps.example(0)]  # heads averaged, (n, n) per layer
    return plot_token_heatmaps(layers, maps.example_labels(0), out / "attention_tokens.png")


def _displayable(pixels: torch.Tensor) -> np.ndarray:
    """Normalised (C, H, W) pixels back to [0, 1] for display: (H, W) grey or (H, W, C) colour."""
    image = pixels.float().numpy()
    image = (image - image.min()) / max(float(image.max() - image.min()), 1e-9)
    return image[0] if image.shape[0] == 1 else image.transpose(1, 2, 0)
