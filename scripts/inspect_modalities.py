"""Attention distance and entropy of a trained model of each modality, and a rollout over Fashion-MNIST.

    python scripts/inspect_modalities.py image=/tmp/insp_image text=/tmp/insp_text \\
        audio=/tmp/insp_audio protein=/tmp/insp_protein [--examples 32] [--out results/inspect]

Each argument names a modality and the --trainer.default_root_dir of a `tabrasa fit` run; its newest
checkpoint (best, else last) and the run's config.yaml are loaded. Mean attention distance and entropy are
averaged over the first --examples held-out test examples (padding excluded) and written as
<modality>_distance.png and <modality>_distance.json. For the image run, the first test image and its
attention rollout are written as fashion_mnist_example.png and fashion_mnist_rollout.png.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import PIL.Image

from tabrasa.inspect import (
    AttentionMaps,
    attention_maps,
    grid_rollout,
    mean_attention_distance,
    mean_attention_entropy,
)
from tabrasa.inspect.plots import plot_image_rollout, plot_locality
from tabrasa.inspect.report import distance_unit
from tabrasa.inspect.source import Inspected, from_run
from tabrasa.tokenizers.base import Batch


def newest_checkpoint(root: Path) -> Path:
    found = sorted(root.rglob("*.ckpt"), key=lambda p: (p.name != "last.ckpt", p.stat().st_mtime))
    if not found:
        raise SystemExit(f"no checkpoint under {root}; train first (see the README's 'Inspecting attention')")
    return found[-1]


def held_out_batch(model: Inspected, examples: int) -> Batch:
    """The first `examples` held-out test examples, tokenised as the run's test loader gives them."""
    model.data.setup("test")
    batch: Batch = next(iter(model.data.test_dataloader()))
    return {k: v[:examples] for k, v in batch.items()}


def inspect_run(modality: str, root: Path, out: Path, examples: int) -> dict[str, object]:
    ckpt = newest_checkpoint(root)
    model = from_run(None, ckpt)
    batch = held_out_batch(model, examples)
    maps = attention_maps(model.encoder, model.embedder, batch, model.tokenizer)
    patch, unit = distance_unit(model.tokenizer, model.modality)
    distance, entropy = mean_attention_distance(maps, patch), mean_attention_entropy(maps)
    title = f"{model.name} ({maps.mask.shape[0]} test examples)"
    plot_locality(distance, entropy, unit, out / f"{modality}_distance.png", title)
    summary = {
        "run": model.name,
        "checkpoint": ckpt.name,
        "trained_steps": _steps(ckpt),
        "examples": int(maps.mask.shape[0]),
        "layers_x_heads": list(distance.shape),
        "distance_unit": unit,
        "mean_attention_distance": np.round(distance, 3).tolist(),
        "attention_entropy_nats": np.round(entropy, 3).tolist(),
        "mean_tokens_per_example": round(float(maps.mask.sum(axis=1).mean()), 1),
        "uniform_attention_distance_and_entropy": [round(v, 3) for v in uniform_reference(maps, patch)],
    }
    (out / f"{modality}_distance.json").write_text(json.dumps(summary, indent=2) + "\n")
    if modality == "image":
        pixels = batch["pixels"][0, 0].numpy()
        image = (pixels - pixels.min()) / max(float(pixels.max() - pixels.min()), 1e-9)
        PIL.Image.fromarray((image * 255).round().astype(np.uint8)).save(out / "fashion_mnist_example.png")
        label = int(batch["label"][0]) if "label" in batch else -1
        names = getattr(model.data, "class_names", None)
        shown = names[label] if names and label >= 0 else ""
        plot_image_rollout(
            image, grid_rollout(maps, 0), out / "fashion_mnist_rollout.png", f"test image: {shown}"
        )
    return summary


def uniform_reference(maps: AttentionMaps, patch: tuple[int, int]) -> tuple[float, float]:
    """Distance and entropy if every real token attended uniformly to every real token: the untrained
    baseline the measured heads are read against."""
    real = maps.mask[:, None, :, None] & maps.mask[:, None, None, :]  # (B, 1, N, N)
    uniform = real / np.maximum(real.sum(axis=-1, keepdims=True), 1)
    ref = AttentionMaps([uniform.astype(np.float64)], maps.mask, maps.grid, None, maps.registers)
    return float(mean_attention_distance(ref, patch)[0, 0]), float(mean_attention_entropy(ref)[0, 0])


def _steps(ckpt: Path) -> int | None:
    from tabrasa.training import load_checkpoint

    step = load_checkpoint(ckpt).get("global_step")
    return int(step) if step is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="modality=run_root, e.g. image=/tmp/insp_image")
    parser.add_argument("--examples", type=int, default=32)
    parser.add_argument("--out", type=Path, default=Path("results/inspect"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for item in args.runs:
        modality, _, root = item.partition("=")
        summary = inspect_run(modality, Path(root), args.out, args.examples)
        distance = np.array(summary["mean_attention_distance"])
        entropy = np.array(summary["attention_entropy_nats"])
        print(f"{modality}: steps {summary['trained_steps']}, distance per layer (head mean, "
              f"{summary['distance_unit']}) {distance.mean(axis=1).round(2).tolist()}, "
              f"entropy {entropy.mean(axis=1).round(2).tolist()}")  # fmt: skip


if __name__ == "__main__":
    main()
