"""A pretrained backbone and embedder as a `tabrasa` checkpoint folder (model.safetensors, tabrasa.json, the
tokenizer's files), which any task config loads with

    pretrained: {family: tabrasa, path: runs/pretrain_text/backbone}

The pretraining head (token head, mask token, patch decoder) is not written. It takes the parts, not the
task, so the pretraining tasks call it at the end of fit without importing the export command.
"""

from __future__ import annotations

from pathlib import Path

from torch import nn

from tabrasa.backbone.encoder import Encoder
from tabrasa.errors import UserError
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.tabrasa_format import save_tabrasa
from tabrasa.tokenizers.base import Embedder, Tokenizer
from tabrasa.tokenizers.text import TextTokenizer


def pretrained_config(
    backbone: nn.Module, embedder: Embedder, tokenizer: Tokenizer, folder: Path
) -> PretrainedConfig:
    """The task's backbone and embedder described as a checkpoint; text vocabularies are saved to folder."""
    if not isinstance(backbone, Encoder):
        raise UserError(
            f"only tabrasa's transformer Encoder exports as a checkpoint, not {type(backbone).__name__}"
        )
    to_spec = getattr(embedder, "to_spec", None)
    if to_spec is None:
        raise UserError(
            f"{type(embedder).__name__} has no spec, so a checkpoint cannot name it; export is not "
            f"available for this tokenizer yet"
        )
    tokenizer = getattr(tokenizer, "inner", tokenizer)
    spec = None
    if isinstance(tokenizer, TextTokenizer):
        tokenizer.save(folder / "tokenizer.json")
        spec = tokenizer.to_spec("tokenizer.json")
    elif hasattr(tokenizer, "to_spec"):
        try:
            spec = tokenizer.to_spec()
        except ValueError:  # e.g. an ImageTokenizer without a fixed image_size: nothing to rebuild it from
            spec = None
    grid = getattr(spec, "image_size", None)
    if grid is not None:
        patch = spec.patch_size  # type: ignore[union-attr]
        grid = (grid[0] // patch[0], grid[1] // patch[1])
    prefix = int(getattr(embedder, "cls_token", None) is not None) if grid is not None else 0
    return PretrainedConfig("tabrasa", backbone.config, to_spec(), spec, grid, prefix)


def save_backbone(backbone: nn.Module, embedder: Embedder, tokenizer: Tokenizer, out: str | Path) -> Path:
    """Backbone + embedder as a tabrasa checkpoint folder; the pretraining head is left out."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    config = pretrained_config(backbone, embedder, tokenizer, out)
    return save_tabrasa(backbone, embedder, config, out, out)
