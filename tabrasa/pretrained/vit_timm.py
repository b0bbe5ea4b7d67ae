"""ViT in timm's VisionTransformer layout (family `vit_timm`).

timm's hub folders carry `config.json` with the architecture name and its arguments but not the widths, so
the translator builds the timm model on the meta device (no memory, no weights) and reads its shape, and
refuses every variant the tabrasa backbone cannot reproduce (register tokens, layer scale, QK-norm, ...).
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
from tabrasa.pretrained.family import Family, mlp_ratio, refuse, require
from tabrasa.tokenizers.image import ImageEmbedder

WB = ("weight", "bias")

KEY_MAP = KeyMap(
    rules={
        "cls_token": "embedder.cls_token",
        "pos_embed": To("encoder.positions.weight", squeeze=1),
        "patch_embed.proj.weight": "embedder.proj.weight",
        "patch_embed.proj.bias": "embedder.proj.bias",
        "norm.weight": "encoder.norm.weight",
        "norm.bias": "encoder.norm.bias",
        **{
            f"blocks.{{}}.{layer}.{p}": f"encoder.blocks.{{}}.{layer}.{p}"
            for layer in ("norm1", "attn.qkv", "attn.proj", "norm2", "mlp.fc1", "mlp.fc2")
            for p in WB
        },
    },
    ignore={"head.*": "the classification head is a task head"},
)


def build_reference(config: dict[str, Any]) -> nn.Module:
    """The timm model a timm config describes, on the meta device (shapes only)."""
    import timm

    args = dict(config.get("model_args", {}))
    args.setdefault("num_classes", config.get("num_classes", 0))
    with torch.device("meta"):
        return timm.create_model(require(config, "architecture", "vit_timm"), pretrained=False, **args)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    from timm.models.vision_transformer import VisionTransformer

    name = "vit_timm"
    model = build_reference(config)
    refuse(
        type(model) is not VisionTransformer, name, f"{type(model).__name__} (not a plain VisionTransformer)"
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
        max_len=1 + grid[0] * grid[1],
    )
    patch = list(model.patch_embed.patch_size)
    embedder = {"kind": "image", "channels": model.patch_embed.proj.in_channels, "patch_size": patch}
    embedder["cls_token"] = True
    data = config.get("pretrained_cfg", {})
    tokenizer = {
        **embedder,
        "kind": "image",
        "image_size": list(model.patch_embed.img_size),
        "mean": list(data.get("mean", (0.485, 0.456, 0.406))),  # timm's IMAGENET_DEFAULT_MEAN / STD
        "std": list(data.get("std", (0.229, 0.224, 0.225))),
    }
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=1, source=config)


def _refuse_variants(model: nn.Module, name: str) -> None:
    block = model.blocks[0]
    checks = {
        "register tokens": model.num_reg_tokens > 0,
        "a class token outside the position table (no_embed_class)": model.no_embed_class,
        "no class token": model.cls_token is None,
        "dynamic image size": model.dynamic_img_size,
        "a norm before the blocks (pre_norm)": not isinstance(model.norm_pre, nn.Identity),
        "a norm after pooling (fc_norm)": not isinstance(model.fc_norm, nn.Identity),
        "attention pooling": model.attn_pool is not None,
        "a norm in the patch embedding": not isinstance(model.patch_embed.norm, nn.Identity),
        "layer scale": not isinstance(block.ls1, nn.Identity),
        "QK-norm": not isinstance(block.attn.q_norm, nn.Identity),
        "attention without biases": block.attn.qkv.bias is None,
        "an activation other than exact GELU": not (
            isinstance(block.mlp.act, nn.GELU) and block.mlp.act.approximate == "none"
        ),
    }
    for what, present in checks.items():
        refuse(bool(present), name, what)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    grid, patch = config.grid, config.embedder["patch_size"]
    assert grid is not None
    size = [grid[0] * patch[0], grid[1] * patch[1]]
    args = {**config.source.get("model_args", {}), "img_size": size}
    return {**config.source, "model_args": args}


FAMILY = Family("vit_timm", KEY_MAP, translate, ImageEmbedder, export_config)
