"""Drawing attention: rollout over an image or a spectrogram, token-to-token heatmaps, distance and entropy.

Every function writes one PNG through matplotlib's Agg backend (no display needed) and returns its path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tabrasa.plotting import pyplot, save

MAX_LABELS = 48  # beyond this many tokens, label every k-th one so the labels stay readable


def plot_image_rollout(image: np.ndarray, heat: np.ndarray, path: Path, title: str = "") -> Path:
    """image (H, W) or (H, W, C) in [0, 1]; heat (rows, cols) on the patch grid, stretched over the image."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(7, 3.6))
    cmap = "gray" if image.ndim == 2 else None
    extent = (-0.5, image.shape[1] - 0.5, image.shape[0] - 0.5, -0.5)  # pixel edges, as imshow places them
    axes[0].imshow(image, cmap=cmap)
    axes[0].set_title("input")
    axes[1].imshow(image, cmap=cmap)
    shown = axes[1].imshow(_unit(heat), cmap="inferno", alpha=0.6, extent=extent, interpolation="bilinear")
    axes[1].set_title("attention rollout")
    fig.colorbar(shown, ax=axes[1], fraction=0.046, label="share of the output (max = 1)")
    for ax in axes:
        ax.set_xticks([]), ax.set_yticks([])
    fig.suptitle(title)
    return save(fig, path)


def plot_spectrogram_rollout(
    features: np.ndarray, heat: np.ndarray, path: Path, title: str = "", hop_ms: float = 10.0
) -> Path:
    """features (frames, mel bins); heat (time rows, frequency columns) on the patch grid, drawn over it."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(7, 4.8), sharex=True)
    frames, mels = features.shape
    extent = (0, frames * hop_ms / 1000, 0, mels)
    for ax in axes:
        ax.imshow(features.T, origin="lower", aspect="auto", cmap="magma", extent=extent)
        ax.set_ylabel("mel bin")
    # Time runs along the grid's rows, frequency along its columns: transpose to draw time horizontally.
    shown = axes[1].imshow(
        _unit(heat).T, origin="lower", aspect="auto", cmap="viridis", alpha=0.65, extent=extent
    )
    axes[0].set_title("log-mel spectrogram")
    axes[1].set_title("attention rollout")
    axes[1].set_xlabel("time (s)")
    fig.colorbar(shown, ax=axes, fraction=0.03, label="share of the output (max = 1)")
    fig.suptitle(title)
    return save_no_layout(fig, path)


def plot_token_heatmaps(
    layers: Sequence[np.ndarray], labels: Sequence[str] | None, path: Path, title: str = ""
) -> Path:
    """layers: per layer (n, n) weights (heads averaged), query rows × key columns, labelled by token."""
    plt = pyplot()
    n_layers, n = len(layers), layers[0].shape[-1]
    cols = min(n_layers, 3)
    rows = -(-n_layers // cols)
    side = 2.2 + 0.18 * min(n, MAX_LABELS)
    fig, axes = plt.subplots(rows, cols, figsize=(side * cols, side * rows), squeeze=False)
    step = max(1, -(-n // MAX_LABELS))
    ticks = np.arange(0, n, step)
    for index, ax in enumerate(axes.flat):
        if index >= n_layers:
            ax.axis("off")
            continue
        ax.imshow(layers[index], cmap="Blues", vmin=0.0, vmax=max(float(layers[index].max()), 1e-9))
        ax.set_title(f"layer {index + 1}")
        if labels is not None:
            shown = [labels[i] for i in ticks]
            ax.set_xticks(ticks, shown, rotation=90, fontsize=7)
            ax.set_yticks(ticks, shown, fontsize=7)
        ax.set_xlabel("key (attended to)")
        ax.set_ylabel("query")
    fig.suptitle(title or "attention, heads averaged")
    return save(fig, path)


def plot_locality(distance: np.ndarray, entropy: np.ndarray, unit: str, path: Path, title: str = "") -> Path:
    """distance and entropy (L, H): a dot per head and layer, as ViT's Fig. 7; the heads' mean as a line."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    layers = np.arange(1, distance.shape[0] + 1)
    for ax, values, label in ((axes[0], distance, f"mean attention distance ({unit})"),
                              (axes[1], entropy, "attention entropy (nats)")):  # fmt: skip
        for head in range(values.shape[1]):
            ax.scatter(layers, values[:, head], s=18, label=f"head {head + 1}")
        ax.plot(layers, values.mean(axis=1), color="black", lw=1, label="mean of heads")
        ax.set_xlabel("layer")
        ax.set_ylabel(label)
        ax.set_xticks(layers)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="best")
    fig.suptitle(title)
    return save(fig, path)


def save_no_layout(fig: Any, path: Path) -> Path:
    """`save` for figures whose shared colorbar tight_layout cannot place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    pyplot().close(fig)
    return path


def _unit(heat: np.ndarray) -> np.ndarray:
    """Scaled to a maximum of 1, so maps of different inputs share one colour scale."""
    top = float(np.max(heat)) if heat.size else 0.0
    return heat / top if top > 0 else heat
