"""Whisper's audio encoder from a CTranslate2 model folder (family `whisper_ct2`), e.g. faster-whisper's.

CTranslate2 stores query, key and value already fused (`self_attention/linear_0`, with a zero key bias),
LayerNorms as gamma/beta, the sinusoidal table under `position_encodings`, and often float16 weights
(cast to the module's float32 on load). Its config.json describes decoding, not the architecture: the
widths come from the tensors and the head count from the `encoder/num_heads` scalar in model.bin.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.ctranslate2_format import read_ctranslate2
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.families import Family
from tabrasa.pretrained.whisper_hf import whisper_config

LAYER, BLOCK = "encoder/layer_{}/", "encoder.blocks.{}."
WB = (("weight", "weight"), ("bias", "bias"))
LN = (("gamma", "weight"), ("beta", "bias"))

KEY_MAP = KeyMap(
    rules={
        **{f"encoder/{conv}/{p}": f"embedder.{conv}.{p}" for conv in ("conv1", "conv2") for p, _ in WB},
        "encoder/position_encodings/encodings": "embedder.positions",
        **{f"encoder/layer_norm/{src}": f"encoder.norm.{dst}" for src, dst in LN},
        **{
            f"{LAYER}{src}/{p}": f"{BLOCK}{dst}.{q}"
            for src, dst in (
                ("self_attention/linear_0", "attn.qkv"),
                ("self_attention/linear_1", "attn.proj"),
                ("ffn/linear_0", "mlp.fc1"),
                ("ffn/linear_1", "mlp.fc2"),
            )
            for p, q in WB
        },
        **{
            f"{LAYER}{src}/{p}": f"{BLOCK}{dst}.{q}"
            for src, dst in (("self_attention/layer_norm", "norm1"), ("ffn/layer_norm", "norm2"))
            for p, q in LN
        },
    },
    ignore={"decoder/*": "the text decoder is not an encoder backbone", "encoder/num_heads": "in the config"},
)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    state = read_ctranslate2(folder / "model.bin")
    conv1 = state["encoder/conv1/weight"]  # (dim, n_mels, 3)
    depth = len({m.group(1) for k in state if (m := re.match(r"encoder/layer_(\d+)/", k))})
    ffn = state["encoder/layer_0/ffn/linear_0/weight"].shape[0]
    tokens = state["encoder/position_encodings/encodings"].shape[0]
    heads = int(state["encoder/num_heads"])
    return whisper_config(
        "whisper_ct2", conv1.shape[0], depth, heads, ffn, conv1.shape[1], tokens, "gelu", {}
    )


# config.json is CTranslate2's decoding settings; it must exist but the architecture is read from model.bin.
FAMILY = Family("whisper_ct2", KEY_MAP, translate, reader=read_ctranslate2)
