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
from tabrasa.pretrained.families import Family, activation, mlp_ratio, refuse, require
from tabrasa.tokenizers.image import ImageEmbedderSpec, ImageTokenizerSpec, as_pair
from tabrasa.tokenizers.specs import grid_size

LAYER = "encoder.layer.{}."
BLOCK = "encoder.blocks.{}."
WB = ("weight", "bias")

# The blocks of every ViT-like Hugging Face model (ViT, DeiT, AST) are stored under these names.
LAYER_RULES: dict[str, str | To] = {
    **{
        f"{LAYER}attention.attention.{name}.{p}": To(f"{BLOCK}attn.qkv.{p}", part=i, parts=3)
        for i, name in enumerate(("query", "key", "value"))
        for p in WB
    },
    **{
        f"{LAYER}{src}.{p}": f"{BLOCK}{dst}.{p}"
        for src, dst in (
            ("attention.output.dense", "attn.proj"),
            ("layernorm_before", "norm1"),
            ("layernorm_after", "norm2"),
            ("intermediate.dense", "mlp.fc1"),
            ("output.dense", "mlp.fc2"),
        )
        for p in WB
    },
    "layernorm.weight": "encoder.norm.weight",
    "layernorm.bias": "encoder.norm.bias",
}

KEY_MAP = KeyMap(
    rules={
        "embeddings.cls_token": "embedder.cls_token",
        "embeddings.position_embeddings": To("encoder.positions.weight", squeeze=1),
        "embeddings.patch_embeddings.projection.weight": "embedder.proj.weight",
        "embeddings.patch_embeddings.projection.bias": "embedder.proj.bias",
        **LAYER_RULES,
    },
    ignore={
        "pooler.*": "the tanh pooler is a task head",
        "classifier.*": "the classification head is a task head",
    },
)


def vit_encoder_config(config: dict[str, Any], name: str, max_len: int) -> EncoderConfig:
    """The blocks of a ViT-like Hugging Face config (ViT, AST): pre-LN, final norm, learned positions."""
    refuse(not config.get("qkv_bias", True), name, "attention without biases")
    dim = require(config, "hidden_size", name)
    return EncoderConfig(
        dim=dim,
        depth=require(config, "num_hidden_layers", name),
        heads=require(config, "num_attention_heads", name),
        mlp_ratio=mlp_ratio(require(config, "intermediate_size", name), dim, name),
        norm_placement="pre",
        norm_eps=config.get("layer_norm_eps", 1e-12),
        final_norm=True,
        activation=activation(config.get("hidden_act", "gelu"), name),
        positions="learned",
        max_len=max_len,
    )


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "vit_hf"
    image = as_pair(require(config, "image_size", name), "image_size")
    patch = as_pair(require(config, "patch_size", name), "patch_size")
    grid = (image[0] // patch[0], image[1] // patch[1])
    encoder = vit_encoder_config(config, name, max_len=1 + grid[0] * grid[1])
    channels = config.get("num_channels", 3)
    embedder = ImageEmbedderSpec(channels, patch)
    mean, std = _normalisation(folder)
    tokenizer = ImageTokenizerSpec(patch, channels, image, _floats(mean), _floats(std))
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=1, source=config)


def _floats(value: float | list[float]) -> float | tuple[float, ...]:
    return float(value) if isinstance(value, int | float) else tuple(float(v) for v in value)


def _normalisation(folder: Path) -> tuple[list[float] | float, list[float] | float]:
    """image_mean / image_std of the checkpoint's preprocessor, else ViTImageProcessor's 0.5 / 0.5."""
    file = folder / "preprocessor_config.json"
    settings = json.loads(file.read_text()) if file.exists() else {}
    return settings.get("image_mean", 0.5), settings.get("image_std", 0.5)


def vit_export_config(config: PretrainedConfig) -> dict[str, Any]:
    """The block fields of a ViT-like Hugging Face config."""
    e = config.encoder
    return {
        **config.source,
        "hidden_size": e.dim,
        "num_hidden_layers": e.depth,
        "num_attention_heads": e.heads,
        "intermediate_size": e.mlp_dim,
        "layer_norm_eps": e.norm_eps,
        "hidden_act": {"gelu_tanh": "gelu_new"}.get(e.activation, e.activation),
        "qkv_bias": True,
    }


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    embedder = config.embedder
    assert config.grid is not None and isinstance(embedder, ImageEmbedderSpec)
    patch = embedder.patch_size
    size = grid_size(config.grid, patch)
    return {
        **vit_export_config(config),
        "architectures": ["ViTModel"],
        "model_type": "vit",
        "image_size": size[0] if size[0] == size[1] else size,
        "patch_size": patch[0],
        "num_channels": embedder.channels,
    }


FAMILY = Family("vit_hf", KEY_MAP, translate, export_config)
