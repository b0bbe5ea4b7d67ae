"""The two patterns every family's key map is built from, written once: modules that only change name, and
separate query / key / value projections fused into tabrasa's one `attn.qkv` (as torchtune's
`_convert_weights.py` maps fuse them). Layer prefixes carry `{}` for the layer index, as in the maps.

Shared name lists sit here too, so a source layout used by several families is spelled once:
`HF_LINEARS` for Hugging Face's BERT-derived encoders and `FAIRSEQ_BLOCK` for fairseq's encoder layer.
"""

from __future__ import annotations

from tabrasa.pretrained.engine import To

WB = ("weight", "bias")
BLOCK = (
    "encoder.blocks.{}."  # tabrasa's Encoder; timm's VisionTransformer uses the same names under `blocks.{}.`
)
QKV = ("query", "key", "value")  # Hugging Face's BERT-derived attention (BertSelfAttention, ViTSelfAttention)

# The feed-forward and output projections of BertLayer and its descendants (RoBERTa, ESM, ViT, DeiT, AST);
# only their LayerNorms are named differently.
HF_LINEARS = (
    ("attention.output.dense", "attn.proj"),
    ("intermediate.dense", "mlp.fc1"),
    ("output.dense", "mlp.fc2"),
)
# LayerNorm parameters under TensorFlow's names, as files converted from the original BERT code store them.
TF_LAYERNORM = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}
# fairseq's TransformerEncoderLayer, kept by fair-esm's ESM2 and Hugging Face's Whisper encoder.
FAIRSEQ_QKV = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")
FAIRSEQ_BLOCK = (
    ("self_attn.out_proj", "attn.proj"),
    ("self_attn_layer_norm", "norm1"),
    ("fc1", "mlp.fc1"),
    ("fc2", "mlp.fc2"),
    ("final_layer_norm", "norm2"),
)


def same(*modules: str) -> tuple[tuple[str, str], ...]:
    """Modules the source names as tabrasa does, as (source, target) pairs for `renamed`."""
    return tuple((m, m) for m in modules)


def renamed(
    layer: str,
    modules: tuple[tuple[str, str], ...],
    block: str = BLOCK,
    params: tuple[str, ...] = WB,
) -> dict[str, str | To]:
    """`{layer}{source}.{p}` → `{block}{target}.{p}` for each (source, target) module and parameter `p`."""
    return {f"{layer}{src}.{p}": f"{block}{dst}.{p}" for src, dst in modules for p in params}


def fused_qkv(
    layer: str,
    names: tuple[str, str, str] = QKV,
    block: str = BLOCK,
    params: tuple[str, ...] = WB,
    no_bias: tuple[int, ...] = (),
) -> dict[str, str | To]:
    """The query, key and value modules `{layer}{name}` as slices 0, 1, 2 of `{block}attn.qkv`.

    no_bias: the slices whose bias the source does not store (Whisper's key projection): filled with zeros
    on import and dropped on export (see `To.zero_parts` for why that changes nothing).
    """
    rules: dict[str, str | To] = {}
    for i, name in enumerate(names):
        for p in params:
            zeros = no_bias if p == "bias" else ()
            if i not in zeros:
                rules[f"{layer}{name}.{p}"] = To(f"{block}attn.qkv.{p}", part=i, parts=3, zero_parts=zeros)
    return rules
