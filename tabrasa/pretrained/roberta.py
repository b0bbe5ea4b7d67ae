"""RoBERTa (Liu et al. 2019) and every RobertaModel checkpoint (XLM-R, CamemBERT, CodeBERT, ...).

BERT's blocks and names (`bert.KEY_MAP`) with two differences. Position ids count from the padding index
+ 1 (fairseq's `make_positions`: real token i sits at row pad + 1 + i), so the first pad + 1 rows of the
table are never read for a real token: they are dropped on import (row i of tabrasa's table is row
pad + 1 + i of the file) and written back as zeros on export. And there is one token type, whose row is
added to every token (type_vocab_size 1). RobertaForMaskedLM files carry the model under `roberta.`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.pretrained import bert
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.families import Family, refuse, require
from tabrasa.pretrained.hf_encoder import encoder_config
from tabrasa.tokenizers.text import TextEmbedderSpec

POSITIONS = "embeddings.position_embeddings.weight"


def key_map(config: PretrainedConfig) -> KeyMap:
    """BERT's map with the position table shifted by the checkpoint's padding index + 1."""
    assert isinstance(config.embedder, TextEmbedderSpec) and config.embedder.pad_id is not None
    offset = config.embedder.pad_id + 1
    return KeyMap(
        rules={**bert.KEY_MAP.rules, POSITIONS: To("encoder.positions.weight", drop_rows=offset)},
        ignore={
            **bert.KEY_MAP.ignore,
            "embeddings.token_type_ids": "constant buffer of zeros",
            "lm_head.*": "the masked-LM head is a task head",
            "classifier.*": "the classification head is a task head",
        },
        renames=bert.KEY_MAP.renames,
    )


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "roberta"
    bert.refuse_variants(config, name)
    pad = config.get("pad_token_id", 1)
    rows = require(config, "max_position_embeddings", name) - pad - 1
    refuse(rows < 1, name, f"max_position_embeddings <= pad_token_id + 1 ({pad + 1})")
    encoder = encoder_config(
        config, name, placement="post", positions="learned", max_len=rows, default_eps=1e-5
    )
    embedder = TextEmbedderSpec(require(config, "vocab_size", name), pad, config.get("type_vocab_size", 1))
    tokenizer = bert.text_tokenizer_spec(folder, rows)
    return PretrainedConfig(name, encoder, embedder, tokenizer, source=config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    embedder = config.embedder
    assert isinstance(embedder, TextEmbedderSpec) and embedder.pad_id is not None
    return {
        **bert.export_config(config),
        "architectures": ["RobertaModel"],
        "model_type": "roberta",
        "max_position_embeddings": config.encoder.max_len + embedder.pad_id + 1,
    }


FAMILY = Family("roberta", None, translate, export_config, key_map_for=key_map)
