"""ESM-2 (Lin et al. 2023) in the Hugging Face EsmModel file layout (family `esm2`).

Pre-LN blocks with rotary positions (half-split pairing, as tabrasa's RotaryPositions), a final
`emb_layer_norm_after`, and ESM's token-dropout embedding rule (see `tabrasa/tokenizers/esm.py`).
Files saved from EsmForMaskedLM carry the backbone under `esm.`: load them with prefix="esm.".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.families import Family, refuse, require
from tabrasa.pretrained.hf_encoder import encoder_config, exported
from tabrasa.pretrained.key_rules import HF_LINEARS, TF_LAYERNORM, fused_qkv, renamed
from tabrasa.tokenizers.esm import EsmEmbedderSpec, EsmTokenizerSpec
from tabrasa.tokenizers.protein import ESM_ALPHABET, MASK_ID, PAD_ID

LAYER = "encoder.layer.{}."
NORMS = (("attention.LayerNorm", "norm1"), ("LayerNorm", "norm2"))  # pre-LN: before attention, before MLP

KEY_MAP = KeyMap(
    rules={
        "embeddings.word_embeddings.weight": "embedder.token_embed.weight",
        "encoder.emb_layer_norm_after.weight": "encoder.norm.weight",
        "encoder.emb_layer_norm_after.bias": "encoder.norm.bias",
        **fused_qkv(f"{LAYER}attention.self."),
        **renamed(LAYER, HF_LINEARS + NORMS),
    },
    ignore={
        "embeddings.position_ids": "constant buffer",
        "*rotary_embeddings.inv_freq": "rotary frequencies, recomputed from the config",
        "pooler.*": "the tanh pooler is a task head",
        "contact_head.*": "contact prediction is a task head",
        "lm_head.*": "the masked-LM head is a task head",
    },
    renames=TF_LAYERNORM,
)


def check_alphabet(vocab_size: int, mask_id: int | None, pad_id: int | None, family: str) -> None:
    refuse(
        (vocab_size, mask_id, pad_id) != (len(ESM_ALPHABET), MASK_ID, PAD_ID),
        family,
        f"a vocabulary of {vocab_size} tokens with mask {mask_id} and pad {pad_id} (the ESM alphabet has "
        f"{len(ESM_ALPHABET)}, mask {MASK_ID}, pad {PAD_ID})",
    )


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "esm2"
    refuse(config.get("position_embedding_type") != "rotary", name, "absolute positions (ESM-1b)")
    refuse(bool(config.get("emb_layer_norm_before")), name, "an embedding LayerNorm (ESM-1b)")
    refuse(bool(config.get("is_folding_model")), name, "ESMFold")
    check_alphabet(
        require(config, "vocab_size", name), config.get("mask_token_id"), config.get("pad_token_id"), name
    )
    return esm_config(name, esm_encoder(config, name), bool(config.get("token_dropout", False)), config)


def esm_encoder(config: dict[str, Any], family: str) -> EncoderConfig:
    """ESM-2's blocks from EsmConfig's fields: pre-LN, rotary positions, a final LayerNorm."""
    max_len = config.get("max_position_embeddings", 1026)
    return encoder_config(
        config, family, placement="pre", positions="rotary", max_len=max_len, default_eps=1e-12
    )


def esm_config(
    family: str, encoder: EncoderConfig, token_dropout: bool, source: dict[str, Any]
) -> PretrainedConfig:
    embedder = EsmEmbedderSpec(token_dropout)
    # ESM-2 was trained on crops of 1024 tokens; a smaller rotary table (tiny test models) caps it.
    max_length = min(1024, encoder.max_len)
    tokenizer = EsmTokenizerSpec(max_length, token_dropout)
    return PretrainedConfig(family, encoder, embedder, tokenizer, source=source)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    e = config.encoder
    return {
        **exported(config, "EsmModel", "esm"),
        "max_position_embeddings": e.max_len,
        "position_embedding_type": "rotary",
        "emb_layer_norm_before": False,
        "token_dropout": config.embedder.token_dropout,  # type: ignore[attr-defined]
        "vocab_size": len(ESM_ALPHABET),
        "mask_token_id": MASK_ID,
        "pad_token_id": PAD_ID,
    }


FAMILY = Family("esm2", KEY_MAP, translate, export_config)
