"""AST, the Audio Spectrogram Transformer (Gong et al. 2021), in the Hugging Face file layout (family `ast`).

A ViT over a Kaldi-fbank spectrogram: DeiT's tensors (`deit.KEY_MAP`), with overlapping patches and two prefix
tokens (see `tabrasa/tokenizers/ast.py`). ASTForAudioClassification files carry the backbone under
`audio_spectrogram_transformer.`: load them with that prefix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.deit import KEY_MAP as DEIT_KEY_MAP
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.families import Family, require
from tabrasa.pretrained.vit_hf import vit_encoder_config, vit_export_config
from tabrasa.tokenizers.ast import AST_MEAN, AST_STD, ASTEmbedderSpec, ASTTokenizerSpec, ast_grid

# DeiT's tensors: [CLS] and distillation tokens, one position table, ViT's blocks.
KEY_MAP = KeyMap(rules=DEIT_KEY_MAP.rules, ignore={"classifier.*": "the classification head is a task head"})


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "ast"
    patch = require(config, "patch_size", name)
    stride = (config.get("frequency_stride", 10), config.get("time_stride", 10))
    n_mels, frames = require(config, "num_mel_bins", name), require(config, "max_length", name)
    grid = ast_grid(n_mels, frames, (patch, patch), stride)
    encoder = vit_encoder_config(config, name, max_len=2 + grid[0] * grid[1])
    embedder = ASTEmbedderSpec(n_mels, frames, (patch, patch), stride)
    file = folder / "preprocessor_config.json"
    features = json.loads(file.read_text()) if file.exists() else {}
    tokenizer = ASTTokenizerSpec(
        n_mels, frames, (patch, patch), stride, features.get("mean", AST_MEAN), features.get("std", AST_STD),
        features.get("sampling_rate", 16000),
    )  # fmt: skip
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, 2, source=config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    spec = config.embedder
    assert isinstance(spec, ASTEmbedderSpec)
    return {
        **vit_export_config(config, "ASTModel", "audio-spectrogram-transformer"),
        "patch_size": spec.patch_size[0],
        "frequency_stride": spec.stride[0],
        "time_stride": spec.stride[1],
        "num_mel_bins": spec.n_mels,
        "max_length": spec.frames,
    }


FAMILY = Family("ast", KEY_MAP, translate, export_config)
