"""The two rule builders every family's key map is made of: renamed modules, and query / key / value fused
into `attn.qkv`; checked through the engine, both ways, on a two-layer source with separate projections."""

from __future__ import annotations

import pytest
import torch

from tabrasa.pretrained.engine import CheckpointMismatchError, KeyMap, To, export_keys, map_keys
from tabrasa.pretrained.key_rules import FAIRSEQ_QKV, fused_qkv, renamed, same

LAYER = "layers.{}."


def fairseq_layers(bias: tuple[str, ...] = ("q", "k", "v")) -> dict[str, torch.Tensor]:
    state = {}
    for i in range(2):
        for name in "qkv":
            state[f"layers.{i}.self_attn.{name}_proj.weight"] = torch.randn(4, 4)
            if name in bias:
                state[f"layers.{i}.self_attn.{name}_proj.bias"] = torch.randn(4)
        state[f"layers.{i}.fc1.weight"], state[f"layers.{i}.fc1.bias"] = torch.randn(8, 4), torch.randn(8)
    return state


def test_fused_qkv_stacks_query_key_value_in_order_and_exports_them_back() -> None:
    key_map = KeyMap({**fused_qkv(LAYER, FAIRSEQ_QKV), **renamed(LAYER, (("fc1", "mlp.fc1"),))})
    state = fairseq_layers()
    mapped = map_keys(state, key_map).state
    q, k, v = (state[f"layers.1.self_attn.{n}_proj.weight"] for n in "qkv")
    assert torch.equal(mapped["encoder.blocks.1.attn.qkv.weight"], torch.cat([q, k, v]))
    assert torch.equal(mapped["encoder.blocks.0.mlp.fc1.bias"], state["layers.0.fc1.bias"])
    back = export_keys(mapped, key_map)
    assert back.keys() == state.keys() and all(torch.equal(back[k], state[k]) for k in state)


def test_a_missing_key_bias_is_a_zero_slice_and_is_not_written_back() -> None:
    """Whisper's key projection has no bias: slice 1 of the fused bias is zero, and export omits it."""
    key_map = KeyMap({**fused_qkv(LAYER, FAIRSEQ_QKV, no_bias=(1,)), **renamed(LAYER, (("fc1", "mlp.fc1"),))})
    assert "layers.{}.self_attn.k_proj.bias" not in key_map.rules
    state = fairseq_layers(bias=("q", "v"))
    bias = map_keys(state, key_map).state["encoder.blocks.0.attn.qkv.bias"]
    assert torch.equal(bias[4:8], torch.zeros(4))
    assert torch.equal(bias[8:], state["layers.0.self_attn.v_proj.bias"])
    assert export_keys(map_keys(state, key_map).state, key_map).keys() == state.keys()


def test_without_no_bias_a_bias_free_key_projection_is_refused() -> None:
    """Counter-test: the same source under the plain rule lacks a fused part, and the engine says which."""
    key_map = KeyMap({**fused_qkv(LAYER, FAIRSEQ_QKV), **renamed(LAYER, (("fc1", "mlp.fc1"),))})
    with pytest.raises(CheckpointMismatchError, match=r"attn\.qkv\.bias \(has parts \[0, 2\] of 3\)"):
        map_keys(fairseq_layers(bias=("q", "v")), key_map)


def test_renamed_covers_each_module_and_parameter() -> None:
    rules = renamed("h.{}.", (("ln_1", "norm1"), *same("attn.qkv")), params=("weight",))
    assert rules == {"h.{}.ln_1.weight": "encoder.blocks.{}.norm1.weight",
                     "h.{}.attn.qkv.weight": "encoder.blocks.{}.attn.qkv.weight"}  # fmt: skip
    assert fused_qkv("l.{}.", ("q", "k", "v"), block="b.{}.", params=("weight",))["l.{}.k.weight"] == To(
        "b.{}.attn.qkv.weight", part=1, parts=3
    )
