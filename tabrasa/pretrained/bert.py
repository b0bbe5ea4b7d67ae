"""BERT (Devlin et al. 2019) and every BertModel checkpoint (MiniLM, sentence-transformers, ...).

Post-LN blocks; word + token-type embeddings in the TextEmbedder, learned positions and the embedding
LayerNorm in the encoder (positions → norm_in), query/key/value fused into `attn.qkv`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.families import Family, hf_activation, refuse, require
from tabrasa.pretrained.hf_encoder import encoder_config, exported
from tabrasa.pretrained.key_rules import HF_LINEARS, TF_LAYERNORM, fused_qkv, renamed
from tabrasa.tokenizers.text import TextEmbedderSpec, TextTokenizerSpec

LAYER = "encoder.layer.{}."
NORMS = (("attention.output.LayerNorm", "norm1"), ("output.LayerNorm", "norm2"))

KEY_MAP = KeyMap(
    rules={
        "embeddings.word_embeddings.weight": "embedder.token_embed.weight",
        "embeddings.token_type_embeddings.weight": "embedder.type_embed.weight",
        "embeddings.position_embeddings.weight": "encoder.positions.weight",
        "embeddings.LayerNorm.weight": "encoder.norm_in.weight",
        "embeddings.LayerNorm.bias": "encoder.norm_in.bias",
        **fused_qkv(f"{LAYER}attention.self."),
        **renamed(LAYER, HF_LINEARS + NORMS),
    },
    ignore={
        "embeddings.position_ids": "constant buffer 0..max_len-1",
        "pooler.*": "the tanh pooler is a task head (tabrasa's heads live in tabrasa.tasks)",
        "cls.*": "the pre-training heads (masked LM, next sentence) are task heads",
    },
    renames=TF_LAYERNORM,
)


def refuse_variants(config: dict[str, Any], name: str) -> None:
    """The BertModel options the tabrasa backbone cannot run (RoBERTa's files carry them too)."""
    refuse(config.get("position_embedding_type", "absolute") != "absolute", name, "relative positions")
    refuse(bool(config.get("is_decoder") or config.get("add_cross_attention")), name, "a decoder")


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "bert"
    refuse_variants(config, name)
    max_len = require(config, "max_position_embeddings", name)
    encoder = encoder_config(
        config, name, placement="post", positions="learned", max_len=max_len, default_eps=1e-12
    )
    embedder = TextEmbedderSpec(
        require(config, "vocab_size", name), config.get("pad_token_id", 0), config.get("type_vocab_size", 2)
    )
    return PretrainedConfig(
        name, encoder, embedder, text_tokenizer_spec(folder, encoder.max_len), source=config
    )


def text_tokenizer_spec(folder: Path, max_length: int) -> TextTokenizerSpec | None:
    """The subword vocabulary beside the weights, if there is one (tokenizer.json, else vocab.txt)."""
    for file in ("tokenizer.json", "vocab.txt"):
        if (folder / file).exists():
            settings = folder / "tokenizer_config.json"
            lower = json.loads(settings.read_text()).get("do_lower_case", True) if settings.exists() else True
            return TextTokenizerSpec(file, max_length, lowercase=lower)
    return None


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    e, embedder = config.encoder, config.embedder
    assert isinstance(embedder, TextEmbedderSpec)
    return {
        **exported(config, "BertModel", "bert"),
        "max_position_embeddings": e.max_len,
        "vocab_size": embedder.vocab_size,
        "type_vocab_size": embedder.type_vocab_size,
        "pad_token_id": embedder.pad_id,
        "hidden_act": hf_activation(e.activation),
        "position_embedding_type": "absolute",
    }


FAMILY = Family("bert", KEY_MAP, translate, export_config)
