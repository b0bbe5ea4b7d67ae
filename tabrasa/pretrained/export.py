"""Writing a tabrasa backbone and embedder back in the layout of the family they came from.

The family's key map read backwards (query/key/value split out of `qkv`, Conv1D weights transposed back,
leading dims restored), so exporting and importing again gives bit-identical tensors. Keys the source
has but tabrasa does not keep (BERT's pooler, the MLM heads) are not written; the reference libraries
build those as fresh task heads (e.g. BertModel(add_pooling_layer=False) loads an export exactly).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import export_keys
from tabrasa.pretrained.families import get_family
from tabrasa.pretrained.tabrasa_format import copy_tokenizer_files, module_state, write_folder


def export_state(
    encoder: nn.Module, embedder: nn.Module, config: PretrainedConfig
) -> dict[str, torch.Tensor]:
    """The source family's state dict for these modules."""
    key_map = get_family(config.family).keys(config)
    if key_map is None:
        raise ValueError(f"family {config.family!r} has no source layout to export to")
    state = export_keys(module_state(encoder, embedder), key_map)
    return {k: v.clone().contiguous() for k, v in state.items()}


def export_pretrained(
    encoder: nn.Module,
    embedder: nn.Module,
    config: PretrainedConfig,
    out: str | Path,
    tokenizer_folder: Path | None = None,
) -> Path:
    """Write `model.safetensors` in the source layout, its config.json and the tokenizer's vocabulary file."""
    family = get_family(config.family)
    files = {} if family.export_config is None else {"config.json": family.export_config(config)}
    out = write_folder(out, export_state(encoder, embedder, config), files)
    if tokenizer_folder is not None:
        copy_tokenizer_files(config, tokenizer_folder, out)
    return out
