"""The attention view of one input, as JSON the page draws: what `tabrasa inspect` plots, as numbers.

Weights come from the explicit attention path (tabrasa/inspect/capture.py) and are followed through the
layers by attention rollout (Abnar & Zuidema 2020, tabrasa/inspect/rollout.py). Per modality:

- text, protein: `tokens` and one `heat` value per token, the share of the pooled output that comes from
  it (the class token's row under cls pooling, else the mean over the real tokens' rows), plus the
  per-layer token-to-token weights (heads averaged) while the input is short enough to draw them;
- image: the model's input as a PNG and the rollout on its patch grid (`grid_rollout`, as inspect draws);
- audio: the log-mel spectrogram as a PNG (time to the right, low frequencies at the bottom), a `strip`
  with one value per time step, and for patch tokens the rollout over the spectrogram.

Register tokens are learned, not part of the input: they are left out of what is drawn.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import torch

from tabrasa.inspect.capture import AttentionMaps, attention_maps
from tabrasa.inspect.rollout import attention_rollout, grid_rollout
from tabrasa.serve.model import ServedTask

MAX_MATRIX_TOKENS = 96  # beyond this, per-layer matrices (n² numbers each) are left out of the answer
DIGITS = 5


def attention_view(task: ServedTask, raw: Any) -> dict[str, Any]:
    """The view of `raw` for `task` (UserError where the backbone has no attention)."""
    tokenizer = task.tokenizer
    batch = tokenizer.collate([tokenizer.encode(raw)])
    maps = attention_maps(task.model, getattr(task.model, "embedder", None), batch, tokenizer)
    header = {"layers": maps.layers, "heads": maps.heads, "registers": maps.registers}
    if task.modality == "image" and maps.grid is not None and "pixels" in batch:
        return {**header, **image_view(batch["pixels"][0], maps)}
    if task.modality == "audio" and "features" in batch:
        hop_ms = float(getattr(tokenizer, "hop_ms", 10.0))
        return {**header, **audio_view(batch["features"][0], maps, pooling_of(task), hop_ms)}
    return {**header, **token_view(maps, pooling_of(task))}


def pooling_of(task: ServedTask) -> str:
    return str(getattr(task.model, "pooling", "mean"))


def importance(maps: AttentionMaps, pooling: str) -> np.ndarray:
    """Per real input token (registers left out), its share of the pooled output under rollout."""
    rollout = attention_rollout(maps.example(0))  # (n, n) over the real tokens, registers first
    R = maps.registers
    rows = rollout[R : R + 1] if pooling == "cls" else rollout[R:]
    return rows[:, R:].mean(axis=0)


def token_view(maps: AttentionMaps, pooling: str) -> dict[str, Any]:
    heat = importance(maps, pooling)
    labels = maps.example_labels(0)
    tokens = labels[maps.registers :] if labels is not None else [f"#{i}" for i in range(len(heat))]
    layers = None
    if len(heat) <= MAX_MATRIX_TOKENS:
        R = maps.registers
        layers = [rounded(w.mean(axis=0)[R:, R:]) for w in maps.example(0)]
    return {"kind": "tokens", "tokens": tokens, "heat": rounded(heat), "matrices": layers}


def image_view(pixels: torch.Tensor, maps: AttentionMaps) -> dict[str, Any]:
    heat = grid_rollout(maps)  # (rows, cols)
    image = unit_range(pixels.float().numpy())  # (C, H, W)
    shown = image[0] if image.shape[0] == 1 else image[:3].transpose(1, 2, 0)
    return {"kind": "image", "picture": png_data_url(shown), "grid": list(heat.shape), "heat": rounded(heat)}


def audio_view(features: torch.Tensor, maps: AttentionMaps, pooling: str, hop_ms: float) -> dict[str, Any]:
    """Spectrogram picture + per-time strip (+ the patch grid's rollout, drawn over the picture)."""
    spectrogram = features.float().numpy()  # (frames, mel bins)
    frames = spectrogram.shape[0]
    picture = png_data_url(
        colour(unit_range(spectrogram.T[::-1]))
    )  # (mel bins, frames), low bins at the bottom
    view: dict[str, Any] = {"kind": "audio", "picture": picture, "frames": frames, "hop_ms": hop_ms}
    if maps.grid is not None:
        heat = grid_rollout(maps)  # (time rows, frequency columns)
        view.update(
            grid=[heat.shape[1], heat.shape[0]], heat=rounded(heat.T[::-1]), strip=rounded(heat.sum(1))
        )
        return view
    per_token = importance(maps, pooling)
    view["strip"] = rounded(per_token[len(per_token) - frames :])  # frame tokens follow any class token
    return view


def unit_range(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    return (values - low) / max(high - low, 1e-9)


def colour(values: np.ndarray) -> np.ndarray:
    """[0, 1] values → RGB through matplotlib's magma map (the colours `tabrasa inspect` uses)."""
    from matplotlib import colormaps

    return colormaps["magma"](values)[..., :3]


def png_data_url(image: np.ndarray) -> str:
    """(H, W) or (H, W, 3) values in [0, 1] → a data: URL of their PNG."""
    import PIL.Image

    pixels = np.ascontiguousarray(np.clip(image * 255.0 + 0.5, 0, 255).astype(np.uint8))
    buffer = io.BytesIO()
    PIL.Image.fromarray(pixels).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def rounded(values: np.ndarray) -> list[Any]:
    return np.round(np.asarray(values, dtype=np.float64), DIGITS).tolist()
