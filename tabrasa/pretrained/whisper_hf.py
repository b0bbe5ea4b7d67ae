"""Whisper's audio encoder (Radford et al. 2022), Hugging Face WhisperModel file layout (family `whisper`).

Pre-LN blocks with exact GELU and a final LayerNorm; the conv stem and the fixed sinusoidal table are the
WhisperEmbedder (`tabrasa/tokenizers/whisper.py`), so the backbone has no positions of its own. Query, key
and value are fused into `attn.qkv`; Whisper's key projection has no bias, so that slice is zero. The
decoder is not loaded. WhisperForConditionalGeneration files carry the model under `model.`: load them
with that prefix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.families import Family, activation, mlp_ratio, require
from tabrasa.pretrained.key_rules import FAIRSEQ_BLOCK, FAIRSEQ_QKV, fused_qkv, renamed, same
from tabrasa.tokenizers.whisper import WhisperEmbedderSpec, WhisperTokenizerSpec

LAYER = "encoder.layers.{}."

KEY_MAP = KeyMap(
    rules={
        **renamed("encoder.", same("conv1", "conv2"), block="embedder."),
        "encoder.embed_positions.weight": "embedder.positions",
        "encoder.layer_norm.weight": "encoder.norm.weight",
        "encoder.layer_norm.bias": "encoder.norm.bias",
        **fused_qkv(LAYER, FAIRSEQ_QKV, no_bias=(1,)),  # k_proj has no bias
        **renamed(LAYER, FAIRSEQ_BLOCK),
    },
    ignore={"decoder.*": "the text decoder is not an encoder backbone", "proj_out.*": "the decoder's head"},
)


def whisper_config(
    family: str, dim: int, depth: int, heads: int, ffn: int, n_mels: int, tokens: int, act: str, source: Any
) -> PretrainedConfig:
    encoder = EncoderConfig(
        dim=dim, depth=depth, heads=heads, mlp_ratio=mlp_ratio(ffn, dim, family), norm_placement="pre",
        norm_eps=1e-5, final_norm=True, activation=act, positions="none", max_len=tokens,  # type: ignore[arg-type]
    )  # fmt: skip
    embedder = WhisperEmbedderSpec(n_mels, tokens)
    return PretrainedConfig(family, encoder, embedder, WhisperTokenizerSpec(n_mels), source=source)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "whisper"
    return whisper_config(
        name,
        require(config, "d_model", name),
        require(config, "encoder_layers", name),
        require(config, "encoder_attention_heads", name),
        require(config, "encoder_ffn_dim", name),
        config.get("num_mel_bins", 80),
        config.get("max_source_positions", 1500),
        activation(config.get("activation_function", "gelu"), name),
        config,
    )


FAMILY = Family("whisper", KEY_MAP, translate)
