"""GPT-2 (Radford et al. 2019): causal, pre-LN, tanh-approximated GELU, learned positions, final `ln_f`.

GPT-2 stores its Linear layers as Conv1D with weights of shape (in, out), hence the transposes; `c_attn`
is already one fused query/key/value projection. There is no pad token, so the embedder has no frozen
padding row, and no tokenizer is returned (tabrasa's TextTokenizer pads with a [PAD]/<pad> token).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.families import Family, activation, hf_activation, mlp_ratio, refuse, require
from tabrasa.pretrained.hf_encoder import exported
from tabrasa.pretrained.key_rules import BLOCK, renamed
from tabrasa.tokenizers.text import TextEmbedderSpec

LAYER = "h.{}."
# GPT-2's Conv1D layers (weights stored (in, out)); c_attn is already the fused query/key/value.
CONV1D = (
    ("attn.c_attn", "attn.qkv"),
    ("attn.c_proj", "attn.proj"),
    ("mlp.c_fc", "mlp.fc1"),
    ("mlp.c_proj", "mlp.fc2"),
)

# EncoderConfig field → GPT2Config's name for it.
GPT2_NAMES = {
    "dim": "n_embd",
    "depth": "n_layer",
    "heads": "n_head",
    "mlp_dim": "n_inner",
    "norm_eps": "layer_norm_epsilon",
    "max_len": "n_positions",
}

KEY_MAP = KeyMap(
    rules={
        "wte.weight": "embedder.token_embed.weight",
        "wpe.weight": "encoder.positions.weight",
        "ln_f.weight": "encoder.norm.weight",
        "ln_f.bias": "encoder.norm.bias",
        **renamed(LAYER, (("ln_1", "norm1"), ("ln_2", "norm2"))),
        **{f"{LAYER}{src}.weight": To(f"{BLOCK}{dst}.weight", transpose=True) for src, dst in CONV1D},
        **renamed(LAYER, CONV1D, params=("bias",)),
    },
    ignore={
        "h.*.attn.bias": "the causal mask buffer of older checkpoints",
        "h.*.attn.masked_bias": "a constant of older checkpoints",
        "lm_head.weight": "the language-model head, tied to wte (a task head)",
    },
)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "gpt2"
    refuse(not config.get("scale_attn_weights", True), name, "unscaled attention")
    refuse(bool(config.get("scale_attn_by_inverse_layer_idx")), name, "attention scaled by 1/layer")
    refuse(bool(config.get("add_cross_attention")), name, "cross-attention")
    dim = require(config, "n_embd", name)
    encoder = EncoderConfig(
        dim=dim,
        depth=require(config, "n_layer", name),
        heads=require(config, "n_head", name),
        mlp_ratio=mlp_ratio(config.get("n_inner") or 4 * dim, dim, name),
        norm_placement="pre",
        norm_eps=config.get("layer_norm_epsilon", 1e-5),
        final_norm=True,
        activation=activation(config.get("activation_function", "gelu_new"), name),
        positions="learned",
        max_len=require(config, "n_positions", name),
        causal=True,
    )
    embedder = TextEmbedderSpec(require(config, "vocab_size", name), pad_id=None)
    return PretrainedConfig(name, encoder, embedder, None, source=config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    e = config.encoder
    return {
        **exported(config, "GPT2Model", "gpt2", GPT2_NAMES),
        "vocab_size": config.embedder.vocab_size,  # type: ignore[attr-defined]
        "activation_function": hf_activation(e.activation),
    }


FAMILY = Family("gpt2", KEY_MAP, translate, export_config)
