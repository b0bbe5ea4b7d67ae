"""The encoder fields of Hugging Face's BERT-derived configs, read and written in one place.

BertConfig, RobertaConfig, EsmConfig, ViTConfig, DeiTConfig and ASTConfig spell width, depth, heads,
feed-forward width, LayerNorm eps and activation the same way; a family passes in only what its
architecture fixes (where the LayerNorms sit, which positions, how long the table is, its eps default).
"""

from __future__ import annotations

from typing import Any, Literal

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.families import activation, mlp_ratio, require

# EncoderConfig field → its name in a BERT-derived config.json.
HF_NAMES = {
    "dim": "hidden_size",
    "depth": "num_hidden_layers",
    "heads": "num_attention_heads",
    "mlp_dim": "intermediate_size",
    "norm_eps": "layer_norm_eps",
}


def encoder_config(
    config: dict[str, Any],
    family: str,
    *,
    placement: Literal["pre", "post"],
    positions: Literal["learned", "rotary"],
    max_len: int,
    default_eps: float,
) -> EncoderConfig:
    """The EncoderConfig of a BERT-derived config. Post-LN blocks (BERT, RoBERTa) normalise the embeddings
    first (`embeddings.LayerNorm`) and need no final norm; pre-LN blocks (ESM-2, ViT) end with one."""
    dim = require(config, "hidden_size", family)
    return EncoderConfig(
        dim=dim,
        depth=require(config, "num_hidden_layers", family),
        heads=require(config, "num_attention_heads", family),
        mlp_ratio=mlp_ratio(require(config, "intermediate_size", family), dim, family),
        norm_placement=placement,
        norm_eps=config.get("layer_norm_eps", default_eps),
        input_norm=placement == "post",
        final_norm=placement == "pre",
        activation=activation(config.get("hidden_act", "gelu"), family),
        positions=positions,
        max_len=max_len,
    )


def encoder_fields(encoder: EncoderConfig, names: dict[str, str] = HF_NAMES) -> dict[str, Any]:
    """EncoderConfig's values under a config.json's names (`names`: our field → theirs); with HF_NAMES, the
    inverse of `encoder_config` for the fields every BERT-derived config shares."""
    return {theirs: getattr(encoder, ours) for ours, theirs in names.items()}


def exported(
    config: PretrainedConfig, architecture: str, model_type: str, names: dict[str, str] = HF_NAMES
) -> dict[str, Any]:
    """The head of every Hugging Face config.json export: the checkpoint's own config, its architecture and
    model type, and the encoder's fields (see `encoder_fields`) written over it."""
    return {
        **config.source,
        "architectures": [architecture],
        "model_type": model_type,
        **encoder_fields(config.encoder, names),
    }
