"""ESM-2 in fair-esm's own layout (`esm.model.esm2.ESM2.state_dict()`, family `esm2_fair`).

fair-esm files carry no config.json: give `config={"num_layers": 6, "embed_dim": 320,
"attention_heads": 20}` (ESM2's constructor arguments; `token_dropout` defaults to True as in ESM2).
Its feed-forward is 4× wide, its LayerNorms are torch's (eps 1e-5) and its GELU is exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.esm2 import esm_config, esm_encoder
from tabrasa.pretrained.families import Family, require
from tabrasa.pretrained.key_rules import FAIRSEQ_BLOCK, FAIRSEQ_QKV, fused_qkv, renamed

LAYER = "layers.{}."

KEY_MAP = KeyMap(
    rules={
        "embed_tokens.weight": "embedder.token_embed.weight",
        "emb_layer_norm_after.weight": "encoder.norm.weight",
        "emb_layer_norm_after.bias": "encoder.norm.bias",
        **fused_qkv(LAYER, FAIRSEQ_QKV),
        **renamed(LAYER, FAIRSEQ_BLOCK),
    },
    ignore={
        "layers.*.self_attn.rot_emb.inv_freq": "rotary frequencies, recomputed from the config",
        "contact_head.*": "contact prediction is a task head",
        "lm_head.*": "the masked-LM head is a task head",
    },
)


def as_esm_config(config: dict[str, Any], family: str) -> dict[str, Any]:
    """ESM2's constructor arguments as the EsmConfig fields they amount to: a 4x feed-forward, torch's
    LayerNorm eps, exact GELU, and the 1026-row rotary table of the released models."""
    dim = require(config, "embed_dim", family)
    return {
        "hidden_size": dim,
        "num_hidden_layers": require(config, "num_layers", family),
        "num_attention_heads": require(config, "attention_heads", family),
        "intermediate_size": 4 * dim,
        "layer_norm_eps": 1e-5,
        "hidden_act": "gelu",
        "max_position_embeddings": 1026,
    }


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "esm2_fair"
    encoder = esm_encoder(as_esm_config(config, name), name)
    return esm_config(name, encoder, bool(config.get("token_dropout", True)), config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    e = config.encoder
    return {"num_layers": e.depth, "embed_dim": e.dim, "attention_heads": e.heads,
            "token_dropout": config.embedder.token_dropout}  # type: ignore[attr-defined]  # fmt: skip


FAMILY = Family("esm2_fair", KEY_MAP, translate, export_config)
