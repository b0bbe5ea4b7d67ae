"""BERT (Devlin et al. 2019) and every BertModel checkpoint (MiniLM, sentence-transformers, ...).

Post-LN blocks; word + token-type embeddings in the TextEmbedder, learned positions and the embedding
LayerNorm in the encoder (positions → norm_in), query/key/value fused into `attn.qkv`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.families import Family, activation, mlp_ratio, refuse, require
from tabrasa.tokenizers.text import TextEmbedderSpec, TextTokenizerSpec

LAYER = "encoder.layer.{}."
BLOCK = "encoder.blocks.{}."

KEY_MAP = KeyMap(
    rules={
        "embeddings.word_embeddings.weight": "embedder.token_embed.weight",
        "embeddings.token_type_embeddings.weight": "embedder.type_embed.weight",
        "embeddings.position_embeddings.weight": "encoder.positions.weight",
        "embeddings.LayerNorm.weight": "encoder.norm_in.weight",
        "embeddings.LayerNorm.bias": "encoder.norm_in.bias",
        **{
            f"{LAYER}attention.self.{name}.{p}": To(f"{BLOCK}attn.qkv.{p}", part=i, parts=3)
            for i, name in enumerate(("query", "key", "value"))
            for p in ("weight", "bias")
        },
        **{
            f"{LAYER}{src}.{p}": f"{BLOCK}{dst}.{p}"
            for src, dst in (
                ("attention.output.dense", "attn.proj"),
                ("attention.output.LayerNorm", "norm1"),
                ("intermediate.dense", "mlp.fc1"),
                ("output.dense", "mlp.fc2"),
                ("output.LayerNorm", "norm2"),
            )
            for p in ("weight", "bias")
        },
    },
    ignore={
        "embeddings.position_ids": "constant buffer 0..max_len-1",
        "pooler.*": "the tanh pooler is a task head (tabrasa's heads live in tabrasa.tasks)",
        "cls.*": "the pre-training heads (masked LM, next sentence) are task heads",
    },
    renames={"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"},
)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "bert"
    refuse(config.get("position_embedding_type", "absolute") != "absolute", name, "relative positions")
    refuse(bool(config.get("is_decoder") or config.get("add_cross_attention")), name, "a decoder")
    dim = require(config, "hidden_size", name)
    encoder = EncoderConfig(
        dim=dim,
        depth=require(config, "num_hidden_layers", name),
        heads=require(config, "num_attention_heads", name),
        mlp_ratio=mlp_ratio(require(config, "intermediate_size", name), dim, name),
        norm_placement="post",
        norm_eps=config.get("layer_norm_eps", 1e-12),
        input_norm=True,
        final_norm=False,
        activation=activation(config.get("hidden_act", "gelu"), name),
        positions="learned",
        max_len=require(config, "max_position_embeddings", name),
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
        **config.source,
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": e.dim,
        "num_hidden_layers": e.depth,
        "num_attention_heads": e.heads,
        "intermediate_size": e.mlp_dim,
        "layer_norm_eps": e.norm_eps,
        "max_position_embeddings": e.max_len,
        "vocab_size": embedder.vocab_size,
        "type_vocab_size": embedder.type_vocab_size,
        "pad_token_id": embedder.pad_id,
        "hidden_act": {"gelu_tanh": "gelu_new"}.get(e.activation, e.activation),
        "position_embedding_type": "absolute",
    }


FAMILY = Family("bert", KEY_MAP, translate, export_config)
