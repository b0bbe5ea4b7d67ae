"""ViT in timm's VisionTransformer layout (family `vit_timm`).

timm's hub folders carry `config.json` with the architecture name and its arguments but not the widths, so
the translator builds the timm model on the meta device (no memory, no weights) and reads its shape, and
refuses every variant the tabrasa backbone cannot reproduce (pre-norm, fc_norm, attention pooling, ...).
LayerScale (CaiT, DeiT-III, DINOv2), QK-norm and bias-free attention load into the matching Encoder options;
register tokens (`reg_token`, DINOv2-reg) into the Encoder's `register_tokens`; the distillation token of
VisionTransformerDistilled (DeiT) into the DeitEmbedder.

`no_embed_class` models (all register models, DeiT-III) add positions to the patches only: their table
has no row for the class token, so a zero row is put in front on import (the class token then takes no
position, exactly) and taken off on export. Registers carry no position in timm either.
A bare weights file needs `config={"architecture": "vit_small_patch16_224"}` (plus any `model_args`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.families import Family, mlp_ratio, refuse, require
from tabrasa.pretrained.key_rules import renamed, same
from tabrasa.pretrained.vit_hf import IMAGENET_MEAN, IMAGENET_STD
from tabrasa.tokenizers.deit import DeitEmbedderSpec
from tabrasa.tokenizers.image import ImageEmbedderSpec, ImageTokenizerSpec
from tabrasa.tokenizers.specs import grid_size

LAYER = "blocks.{}."  # timm's blocks carry tabrasa's names

KEY_MAP = KeyMap(
    rules={
        "cls_token": "embedder.cls_token",
        "dist_token": "embedder.dist_token",
        "reg_token": "encoder.register_tokens",
        "pos_embed": To("encoder.positions.weight", squeeze=1),
        "patch_embed.proj.weight": "embedder.proj.weight",
        "patch_embed.proj.bias": "embedder.proj.bias",
        "norm.weight": "encoder.norm.weight",
        "norm.bias": "encoder.norm.bias",
        **renamed(LAYER, same("norm1", "attn.qkv", "attn.proj", "norm2", "mlp.fc1", "mlp.fc2")),
        # LayerScale (CaiT, DeiT-III, DINOv2) and QK-norm: the same names in tabrasa's Encoder.
        **renamed(LAYER, same("ls1", "ls2"), params=("gamma",)),
        **renamed(LAYER, same("attn.q_norm", "attn.k_norm")),
    },
    ignore={"head.*": "the classification head is a task head", "head_dist.*": "the distillation head"},
)
# no_embed_class: the table starts at the first patch; tabrasa's has a (zero) row for the class token.
KEY_MAP_NO_EMBED_CLASS = KeyMap(
    rules={**KEY_MAP.rules, "pos_embed": To("encoder.positions.weight", squeeze=1, zero_rows=1)},
    ignore=KEY_MAP.ignore,
)


def key_map(config: PretrainedConfig) -> KeyMap:
    return KEY_MAP_NO_EMBED_CLASS if build_reference(config.source).no_embed_class else KEY_MAP


def build_reference(config: dict[str, Any]) -> nn.Module:
    """The timm model a timm config describes, on the meta device (shapes only)."""
    import timm

    args = dict(config.get("model_args", {}))
    args.setdefault("num_classes", config.get("num_classes", 0))
    with torch.device("meta"):
        return timm.create_model(require(config, "architecture", "vit_timm"), pretrained=False, **args)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    from timm.models.deit import VisionTransformerDistilled
    from timm.models.vision_transformer import VisionTransformer

    name = "vit_timm"
    model = build_reference(config)
    distilled = type(model) is VisionTransformerDistilled
    refuse(
        type(model) is not VisionTransformer and not distilled,
        name,
        f"{type(model).__name__} (neither a plain VisionTransformer nor a distilled DeiT)",
    )
    _refuse_variants(model, name)
    block = model.blocks[0]
    grid = tuple(model.patch_embed.grid_size)
    encoder = EncoderConfig(
        dim=model.embed_dim,
        depth=len(model.blocks),
        heads=block.attn.num_heads,
        mlp_ratio=mlp_ratio(block.mlp.fc1.out_features, model.embed_dim, name),
        norm_placement="pre",
        norm_eps=model.norm.eps,
        final_norm=True,
        activation="gelu",
        positions="learned",
        max_len=model.num_prefix_tokens - model.num_reg_tokens + grid[0] * grid[1],
        qkv_bias=block.attn.qkv.bias is not None,
        qk_norm=not isinstance(block.attn.q_norm, nn.Identity),
        # The init value only matters for training from scratch; the weights carry the learned scales.
        layer_scale_init=None
        if isinstance(block.ls1, nn.Identity)
        else getattr(block.ls1, "init_values", 1e-5),
        register_tokens=model.num_reg_tokens,
    )
    patch = tuple(model.patch_embed.patch_size)
    channels = model.patch_embed.proj.in_channels
    embedder = DeitEmbedderSpec(channels, patch) if distilled else ImageEmbedderSpec(channels, patch)
    data = config.get("pretrained_cfg", {})
    # timm's IMAGENET_DEFAULT_MEAN / STD unless the checkpoint's pretrained_cfg says otherwise
    mean = tuple(data.get("mean", IMAGENET_MEAN))
    std = tuple(data.get("std", IMAGENET_STD))
    tokenizer = ImageTokenizerSpec(patch, channels, tuple(model.patch_embed.img_size), mean, std)
    prefix = 1 + int(distilled)  # rows before the grid in tabrasa's table: [CLS] (and [DIST])
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=prefix, source=config)


def _refuse_variants(model: nn.Module, name: str) -> None:
    block = model.blocks[0]
    checks = {
        "register tokens with positions (reg_tokens without no_embed_class)": (
            model.num_reg_tokens > 0 and not model.no_embed_class
        ),
        "a distillation token outside the position table": (
            hasattr(model, "dist_token") and model.no_embed_class
        ),
        "no class token": model.cls_token is None,
        "dynamic image size": model.dynamic_img_size,
        "a norm before the blocks (pre_norm)": not isinstance(model.norm_pre, nn.Identity),
        "a norm after pooling (fc_norm)": not isinstance(model.fc_norm, nn.Identity),
        "attention pooling": model.attn_pool is not None,
        "a norm in the patch embedding": not isinstance(model.patch_embed.norm, nn.Identity),
        "an activation other than exact GELU": not (
            isinstance(block.mlp.act, nn.GELU) and block.mlp.act.approximate == "none"
        ),
    }
    for what, present in checks.items():
        refuse(bool(present), name, what)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    assert config.grid is not None and isinstance(config.embedder, ImageEmbedderSpec | DeitEmbedderSpec)
    size = list(grid_size(config.grid, config.embedder.patch_size))
    args = {**config.source.get("model_args", {}), "img_size": size}
    return {**config.source, "model_args": args}


FAMILY = Family("vit_timm", None, translate, export_config, key_map_for=key_map)
