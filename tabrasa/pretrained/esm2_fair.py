"""ESM-2 in fair-esm's own layout (`esm.model.esm2.ESM2.state_dict()`, family `esm2_fair`).

fair-esm files carry no config.json: give `config={"num_layers": 6, "embed_dim": 320,
"attention_heads": 20}` (ESM2's constructor arguments; `token_dropout` defaults to True as in ESM2).
Its feed-forward is 4× wide, its LayerNorms are torch's (eps 1e-5) and its GELU is exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.esm2 import esm_config, esm_encoder_config
from tabrasa.pretrained.families import Family, require

WB = ("weight", "bias")

KEY_MAP = KeyMap(
    rules={
        "embed_tokens.weight": "embedder.token_embed.weight",
        "emb_layer_norm_after.weight": "encoder.norm.weight",
        "emb_layer_norm_after.bias": "encoder.norm.bias",
        **{
            f"layers.{{}}.self_attn.{name}_proj.{p}": To(f"encoder.blocks.{{}}.attn.qkv.{p}", part=i, parts=3)
            for i, name in enumerate("qkv")
            for p in WB
        },
        **{
            f"layers.{{}}.{src}.{p}": f"encoder.blocks.{{}}.{dst}.{p}"
            for src, dst in (
                ("self_attn.out_proj", "attn.proj"),
                ("self_attn_layer_norm", "norm1"),
                ("fc1", "mlp.fc1"),
                ("fc2", "mlp.fc2"),
                ("final_layer_norm", "norm2"),
            )
            for p in WB
        },
    },
    ignore={
        "layers.*.self_attn.rot_emb.inv_freq": "rotary frequencies, recomputed from the config",
        "contact_head.*": "contact prediction is a task head",
        "lm_head.*": "the masked-LM head is a task head",
    },
)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "esm2_fair"
    dim = require(config, "embed_dim", name)
    encoder = esm_encoder_config(
        dim,
        require(config, "num_layers", name),
        require(config, "attention_heads", name),
        4.0,
        1e-5,
        "gelu",
        1026,
    )
    return esm_config(name, encoder, bool(config.get("token_dropout", True)), config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    e = config.encoder
    return {"num_layers": e.depth, "embed_dim": e.dim, "attention_heads": e.heads,
            "token_dropout": config.embedder.token_dropout}  # type: ignore[attr-defined]  # fmt: skip


FAMILY = Family("esm2_fair", KEY_MAP, translate, export_config)
