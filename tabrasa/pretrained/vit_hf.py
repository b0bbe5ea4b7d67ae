"""ViT (Dosovitskiy et al. 2021) in the Hugging Face ViTModel file layout (family `vit_hf`).

Pre-LN blocks, a final LayerNorm, a [CLS] token and a learned position table covering [CLS] + patches.
The names below are those in the *files* on the Hub; transformers 5 renamed its modules (`layers.*.
attention.q_proj`) but still reads and writes these.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.families import Family, hf_activation, refuse, require
from tabrasa.pretrained.hf_encoder import encoder_config, exported
from tabrasa.pretrained.key_rules import HF_LINEARS, fused_qkv, renamed
from tabrasa.tokenizers.deit import DeitEmbedderSpec
from tabrasa.tokenizers.image import ImageEmbedderSpec, ImageTokenizerSpec, Size, as_pair
from tabrasa.tokenizers.specs import grid_size

LAYER = "encoder.layer.{}."
Normalisation = float | tuple[float, ...]
# ImageNet's channel statistics, with which DeiT, DINOv2 and timm's ViTs normalise their input.
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

# The embeddings of every ViT-like Hugging Face model (ViT, DeiT, AST, DINOv2): a [CLS] token, a (1, N, D)
# position table and the patch projection.
EMBEDDING_RULES: dict[str, str | To] = {
    "embeddings.cls_token": "embedder.cls_token",
    "embeddings.position_embeddings": To("encoder.positions.weight", squeeze=1),
    "embeddings.patch_embeddings.projection.weight": "embedder.proj.weight",
    "embeddings.patch_embeddings.projection.bias": "embedder.proj.bias",
}
FINAL_NORM: dict[str, str | To] = {
    "layernorm.weight": "encoder.norm.weight",
    "layernorm.bias": "encoder.norm.bias",
}
# The blocks of ViT, DeiT and AST (BertLayer's names with pre-LN norms) and the final LayerNorm.
LAYER_RULES: dict[str, str | To] = {
    **fused_qkv(f"{LAYER}attention.attention."),
    **renamed(LAYER, (*HF_LINEARS, ("layernorm_before", "norm1"), ("layernorm_after", "norm2"))),
    **FINAL_NORM,
}

KEY_MAP = KeyMap(
    rules={**EMBEDDING_RULES, **LAYER_RULES},
    ignore={
        "pooler.*": "the tanh pooler is a task head",
        "classifier.*": "the classification head is a task head",
    },
)


def vit_encoder_config(config: dict[str, Any], name: str, max_len: int) -> EncoderConfig:
    """The blocks of a ViT-like Hugging Face config (ViT, AST): pre-LN, final norm, learned positions."""
    refuse(not config.get("qkv_bias", True), name, "attention without biases")
    return encoder_config(
        config, name, placement="pre", positions="learned", max_len=max_len, default_eps=1e-12
    )


def image_grid(config: dict[str, Any], name: str) -> tuple[Size, Size, Size]:
    """(image size, patch size, patch grid) of a ViT-like image config."""
    image = as_pair(require(config, "image_size", name), "image_size")
    patch = as_pair(require(config, "patch_size", name), "patch_size")
    return image, patch, (image[0] // patch[0], image[1] // patch[1])


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "vit_hf"
    image, patch, grid = image_grid(config, name)
    encoder = vit_encoder_config(config, name, max_len=1 + grid[0] * grid[1])
    channels = config.get("num_channels", 3)
    embedder = ImageEmbedderSpec(channels, patch)
    # ViTImageProcessor's 0.5 / 0.5 where the checkpoint has no preprocessor_config.json
    mean, std = normalisation(folder, 0.5, 0.5)
    tokenizer = ImageTokenizerSpec(patch, channels, image, mean, std)
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=1, source=config)


def _floats(value: float | list[float] | tuple[float, ...]) -> Normalisation:
    return float(value) if isinstance(value, int | float) else tuple(float(v) for v in value)


def normalisation(
    folder: Path, mean: Normalisation, std: Normalisation
) -> tuple[Normalisation, Normalisation]:
    """image_mean / image_std of the checkpoint's preprocessor_config.json, else the given defaults."""
    file = folder / "preprocessor_config.json"
    settings = json.loads(file.read_text()) if file.exists() else {}
    return _floats(settings.get("image_mean", mean)), _floats(settings.get("image_std", std))


def vit_export_config(config: PretrainedConfig, architecture: str, model_type: str) -> dict[str, Any]:
    """The block fields of a ViT-like Hugging Face config."""
    activation = hf_activation(config.encoder.activation)
    return {**exported(config, architecture, model_type), "hidden_act": activation, "qkv_bias": True}


def image_fields(config: PretrainedConfig) -> dict[str, Any]:
    """image_size, patch_size and num_channels of a ViT-like image config (the inverse of `image_grid`)."""
    embedder = config.embedder
    assert config.grid is not None and isinstance(embedder, ImageEmbedderSpec | DeitEmbedderSpec)
    size = grid_size(config.grid, embedder.patch_size)
    return {
        "image_size": size[0] if size[0] == size[1] else list(size),
        "patch_size": embedder.patch_size[0],
        "num_channels": embedder.channels,
    }


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    return {**vit_export_config(config, "ViTModel", "vit"), **image_fields(config)}


FAMILY = Family("vit_hf", KEY_MAP, translate, export_config)
