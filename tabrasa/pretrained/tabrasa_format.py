"""tabrasa's own checkpoint folder: `model.safetensors` (keys `encoder.*`, `embedder.*`), `tabrasa.json`
(the PretrainedConfig: backbone config, embedder and tokenizer specs, source family) and the tokenizer's
vocabulary file. Written by `tabrasa convert`; read back with family `tabrasa`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from torch import nn

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.families import Family
from tabrasa.tokenizers.base import Embedder

FORMAT_FILE = "tabrasa.json"
FORMAT_VERSION = 1


def module_state(encoder: nn.Module, embedder: nn.Module | None) -> dict[str, torch.Tensor]:
    """One flat state dict in tabrasa names; tensors cloned so none share storage (safetensors refuses)."""
    state = {f"encoder.{k}": v for k, v in encoder.state_dict().items()}
    if embedder is not None:
        state |= {f"embedder.{k}": v for k, v in embedder.state_dict().items()}
    return {k: v.detach().cpu().clone().contiguous() for k, v in state.items()}


def write_folder(out: str | Path, state: dict[str, torch.Tensor], files: dict[str, dict[str, Any]]) -> Path:
    """`out` with `model.safetensors` holding `state` and each of `files` (name → document) as JSON."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    for name, document in files.items():
        (out / name).write_text(json.dumps(document, indent=2) + "\n")
    return out


def copy_tokenizer_files(config: PretrainedConfig, source: Path | None, out: Path) -> None:
    for name in config.tokenizer.files() if config.tokenizer is not None else []:
        if source is None or not (source / name).exists():
            raise FileNotFoundError(f"tokenizer file {name} is not in {source}; it cannot be copied to {out}")
        if (source / name).resolve() != (out / name).resolve():
            shutil.copyfile(source / name, out / name)


def save_tabrasa(
    encoder: nn.Module,
    embedder: Embedder,
    config: PretrainedConfig,
    out: str | Path,
    tokenizer_folder: Path | None = None,
) -> Path:
    """Write a tabrasa checkpoint folder; returns it."""
    document = {"format": "tabrasa", "version": FORMAT_VERSION, **config.to_json()}
    out = write_folder(out, module_state(encoder, embedder), {FORMAT_FILE: document})
    copy_tokenizer_files(config, tokenizer_folder, out)
    return out


def translate(document: dict[str, Any], folder: Path) -> PretrainedConfig:
    if document.get("format") != "tabrasa":
        raise ValueError(
            f"{folder / FORMAT_FILE} is not a tabrasa checkpoint description (format != tabrasa)"
        )
    if document.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{folder}: tabrasa checkpoint version {document.get('version')} is not {FORMAT_VERSION}"
        )
    return PretrainedConfig.from_json({k: v for k, v in document.items() if k not in ("format", "version")})


# key_map None: the file is already in tabrasa's names; the engine still checks every key and shape.
FAMILY = Family("tabrasa", None, translate, None, config_file=FORMAT_FILE)
