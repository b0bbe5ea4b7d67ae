"""The shared mapping engine: strict in every direction, and exactly invertible."""

from __future__ import annotations

import pytest
import torch

from tabrasa.pretrained.engine import CheckpointMismatchError, KeyMap, To, check_fit, export_keys, map_keys

KEY_MAP = KeyMap(
    rules={
        "layer.{}.q.weight": To("blocks.{}.qkv.weight", part=0, parts=3),
        "layer.{}.k.weight": To("blocks.{}.qkv.weight", part=1, parts=3),
        "layer.{}.v.weight": To("blocks.{}.qkv.weight", part=2, parts=3),
        "layer.{}.conv1d.weight": To("blocks.{}.fc.weight", transpose=True),
        "pos": To("positions.weight", squeeze=1),
        "norm.weight": "norm.weight",
    },
    ignore={"pooler.*": "task head"},
    renames={"norm.gamma": "norm.weight"},
)


def source(depth: int = 2) -> dict[str, torch.Tensor]:
    state = {
        "pos": torch.randn(1, 5, 4),
        "norm.gamma": torch.randn(4),
        "pooler.dense.weight": torch.randn(4, 4),
    }
    for i in range(depth):
        state |= {f"layer.{i}.{n}.weight": torch.randn(4, 4) for n in "qkv"}
        state[f"layer.{i}.conv1d.weight"] = torch.randn(4, 8)
    return state


def target_shapes(depth: int = 2) -> dict[str, tuple[int, ...]]:
    shapes = {"positions.weight": (5, 4), "norm.weight": (4,)}
    for i in range(depth):
        shapes |= {f"blocks.{i}.qkv.weight": (12, 4), f"blocks.{i}.fc.weight": (8, 4)}
    return shapes


def test_fuses_transposes_squeezes_renames_and_ignores() -> None:
    state = source()
    mapped = map_keys(state, KEY_MAP)
    check_fit(mapped.state, target_shapes())
    qkv = mapped.state["blocks.1.qkv.weight"]
    assert torch.equal(qkv, torch.cat([state[f"layer.1.{n}.weight"] for n in "qkv"]))
    assert torch.equal(mapped.state["blocks.0.fc.weight"], state["layer.0.conv1d.weight"].T)
    assert torch.equal(mapped.state["positions.weight"], state["pos"][0])
    assert torch.equal(mapped.state["norm.weight"], state["norm.gamma"])
    assert mapped.ignored == ["pooler.dense.weight"]


def test_export_inverts_exactly() -> None:
    state = source()
    exported = export_keys(map_keys(state, KEY_MAP).state, KEY_MAP)
    assert set(exported) == set(state) - {"pooler.dense.weight", "norm.gamma"} | {"norm.weight"}
    for key, tensor in exported.items():
        original = state["norm.gamma"] if key == "norm.weight" else state[key]
        assert torch.equal(tensor, original), key
    again = map_keys(exported, KEY_MAP).state
    assert all(torch.equal(again[k], v) for k, v in map_keys(state, KEY_MAP).state.items())


def test_unknown_source_keys_are_listed() -> None:
    state = source() | {"layer.0.surprise.weight": torch.zeros(1), "extra": torch.zeros(1)}
    with pytest.raises(CheckpointMismatchError, match="unknown source keys") as err:
        map_keys(state, KEY_MAP)
    assert "layer.0.surprise.weight" in str(err.value) and "extra" in str(err.value)


def test_missing_target_keys_are_listed() -> None:
    state = source(depth=1)  # the model has two layers
    with pytest.raises(CheckpointMismatchError, match="does not fill") as err:
        check_fit(map_keys(state, KEY_MAP).state, target_shapes(depth=2))
    assert "blocks.1.qkv.weight" in str(err.value) and "blocks.1.fc.weight" in str(err.value)


def test_extra_target_keys_are_listed() -> None:
    with pytest.raises(CheckpointMismatchError, match="no place in the model") as err:
        check_fit(map_keys(source(depth=3), KEY_MAP).state, target_shapes(depth=2))
    assert "blocks.2.qkv.weight" in str(err.value)


def test_shape_mismatches_are_listed() -> None:
    state = source() | {"pos": torch.randn(1, 7, 4)}
    with pytest.raises(CheckpointMismatchError, match="shape mismatches") as err:
        check_fit(map_keys(state, KEY_MAP).state, target_shapes())
    assert "positions.weight: checkpoint (7, 4) vs model (5, 4)" in str(err.value)


def test_a_missing_part_of_a_fused_tensor_is_an_error() -> None:
    state = source()
    del state["layer.0.k.weight"]
    with pytest.raises(CheckpointMismatchError, match=r"blocks.0.qkv.weight \(has parts \[0, 2\] of 3\)"):
        map_keys(state, KEY_MAP)


def test_export_refuses_tensors_without_a_source_place() -> None:
    with pytest.raises(CheckpointMismatchError, match="unexportable keys"):
        export_keys({"norm.weight": torch.zeros(4), "adapter.weight": torch.zeros(2)}, KEY_MAP)


def test_two_source_keys_for_one_target_is_an_error() -> None:
    state = source() | {"norm.weight": torch.randn(4)}  # beside the legacy norm.gamma
    with pytest.raises(CheckpointMismatchError, match="filled twice"):
        map_keys(state, KEY_MAP)
