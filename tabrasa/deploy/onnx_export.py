"""embedder → backbone → pool → head as one ONNX graph, with dynamic batch and sequence axes.

The graph's inputs are the tensors the run's embedder reads from a collated batch (found by recording its
reads: `input_ids` and `attention_mask` for text, `pixels` for images, `features` and `frame_mask` for
audio); its outputs are `logits` and `probabilities` (the task's predictions). The tokenizer stays outside
the graph: its settings are written beside it as `tokenizer.json` (its `to_spec()`, else its constructor
settings), with `tabrasa_export.json` naming the inputs, outputs, axes and class names.

Exported with torch.onnx's TorchScript-based exporter (`dynamo=False`): it needs no extra package, and the
data-dependent checks the model makes (the vocabulary range, whether any token is padding) are recorded for
the traced example, which is padded, so the graph always takes the masked path, correct with or without
padding.

Attention kinds: `full` and `lowrank` export for any length. `local` does not: its blockwise layout (the
number of window-sized blocks, the window clipped to short inputs, `unfold` over key positions) is computed
in Python from the sequence length, which the exporter freezes to the example's length, and opset 17 has no
Unfold with a dynamic size. `axial` exports only where the token grid is fixed (images resized to one
`image_size`): its grid sizes are Python ints taken from the input's shape, frozen the same way.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tabrasa.deploy.examples import example_raws
from tabrasa.deploy.modality import Modality, modality_of
from tabrasa.deploy.run import TrainedRun
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Batch, Tokenizer

OPSET = 17
GRAPH_FILE = "model.onnx"
OUTPUTS = ("logits", "probabilities")


class RecordingBatch(dict):  # type: ignore[type-arg]
    """A batch that remembers which keys the embedder reads, so the graph takes exactly those inputs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read: list[str] = []

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return super().get(key, default)

    def _note(self, key: str) -> None:
        if key not in self.read and key in self:
            self.read.append(key)


class ExportGraph(nn.Module):
    """The task as a function of positional tensors (what ONNX takes) → (logits, probabilities)."""

    def __init__(self, model: nn.Module, input_names: Sequence[str]) -> None:
        super().__init__()
        self.model = model
        self.input_names = list(input_names)

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch = dict(zip(self.input_names, tensors, strict=True))
        logits = self.model(batch)
        return logits, self.model.objective.predictions(logits)


@dataclass(frozen=True)
class ExportedGraph:
    path: Path
    input_names: list[str]
    dynamic_axes: dict[str, dict[int, str]]


def check_exportable(model: nn.Module, tokenizer: Tokenizer, modality: Modality) -> None:
    """Refuse attention kinds the graph cannot express, naming the reason and the fix."""
    config = getattr(model.backbone, "config", None)
    kind = getattr(getattr(config, "attention", None), "kind", "full")
    if kind == "local":
        raise UserError(
            "ONNX export of attention kind 'local' is not supported: its blockwise layout (number of "
            "window-sized blocks, unfold over key positions) is computed from the sequence length in Python, "
            "which the exporter freezes to one length. Export a model trained with kind: full (local loads "
            "the same weights: set model.init_args.backbone.init_args.config.attention.kind: full, at the "
            "cost of quadratic attention)"
        )
    fixed_grid = modality == "image" and getattr(tokenizer, "image_size", None) is not None
    if kind == "axial" and not fixed_grid:
        raise UserError(
            f"ONNX export of attention kind 'axial' needs a fixed token grid (images resized to one "
            f"image_size), but this {modality} model's grid follows its input's size, which the exporter "
            f"freezes to one size; train with kind: full, or set the image tokenizer's image_size"
        )


def sample_batch(tokenizer: Tokenizer, modality: Modality) -> Batch:
    """A collated batch of synthetic raw inputs of different lengths, so the traced example is padded."""
    return tokenizer.collate([tokenizer.encode(r) for r in example_raws(tokenizer, modality, 2)])


def graph_inputs(model: nn.Module, batch: Batch) -> list[str]:
    recording = RecordingBatch(batch)
    with torch.no_grad():
        model.embedder(recording)
    return [k for k in recording.read if isinstance(batch[k], torch.Tensor)]


def dynamic_axes(
    batch: Mapping[str, torch.Tensor], names: Sequence[str], modality: Modality
) -> dict[str, dict[int, str]]:
    """Axis 0 of every input is the batch; axis 1 is the token, residue or frame axis of sequences (images
    are resized to one size, so theirs stay fixed)."""
    sequence = modality != "image"
    axes = {n: {0: "batch", **({1: "length"} if sequence and batch[n].ndim > 1 else {})} for n in names}
    for output in OUTPUTS:
        axes[output] = {0: "batch"}
    return axes


def export_onnx(run: TrainedRun, out: str | Path) -> ExportedGraph:
    """Write model.onnx, tokenizer.json and tabrasa_export.json into the folder `out`."""
    model, tokenizer = run.model.cpu().eval(), run.tokenizer.eval()
    modality = modality_of(tokenizer)
    check_exportable(model, tokenizer, modality)
    first = sample_batch(tokenizer, modality)
    names = graph_inputs(model, first)
    axes = dynamic_axes(first, names, modality)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / GRAPH_FILE
    with warnings.catch_warnings():
        # The tracer warns at each data-dependent check it records for the (padded) example; see above.
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
        # The exporter restores the wrapper's mode on exit, recursively: a wrapper in train mode (the default
        # of a new module) would leave the model in train mode, with dropout on, after the export.
        try:
            torch.onnx.export(
                ExportGraph(model, names).eval(),
                tuple(first[n] for n in names),
                str(path),
                input_names=names,
                output_names=list(OUTPUTS),
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
        except (torch.onnx.errors.OnnxExporterError, torch.onnx.errors.UnsupportedOperatorError) as error:
            # A backbone whose graph ONNX cannot express (Mamba's length-wise sort that moves real tokens
            # to the front, an ODE solver's data-dependent steps) is refused by name, not half-written.
            path.unlink(missing_ok=True)
            reason = str(error).strip().splitlines()[0].split(". Please")[0]
            raise UserError(
                f"ONNX export of the {type(getattr(model, 'backbone', model)).__name__} backbone is not "
                f"possible ({reason}); serve or predict this run with the PyTorch backend instead"
            ) from error
    write_settings(run, folder, names, axes, modality)
    return ExportedGraph(path, names, axes)


def write_settings(
    run: TrainedRun, folder: Path, names: list[str], axes: dict[str, dict[int, str]], modality: Modality
) -> None:
    tokenizer = run.tokenizer
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer_settings(tokenizer, folder), indent=2) + "\n")
    meta = {
        "format": "onnx",
        "opset": OPSET,
        "modality": modality,
        "inputs": names,
        "outputs": list(OUTPUTS),
        "dynamic_axes": {k: {str(i): n for i, n in v.items()} for k, v in axes.items()},
        "class_names": list(run.class_names) if run.class_names is not None else None,
        "config": str(run.config_path),
        "checkpoint": str(run.checkpoint_path),
    }
    (folder / "tabrasa_export.json").write_text(json.dumps(meta, indent=2) + "\n")


def tokenizer_settings(tokenizer: Tokenizer, folder: Path) -> dict[str, Any]:
    """The tokenizer's typed spec where it has one (text tokenizers save their vocabulary beside it);
    otherwise its plain constructor settings, enough to rebuild the preprocessing by hand."""
    save = getattr(tokenizer, "save", None)
    if callable(save):
        save(folder / "vocabulary.json")
    to_spec = getattr(tokenizer, "to_spec", None)
    if callable(to_spec):
        try:
            spec = to_spec("vocabulary.json") if callable(save) else to_spec()
            return {"class": type(tokenizer).__name__, **spec.to_json()}
        except (TypeError, ValueError):
            pass  # a spec needing what this tokenizer lacks (an image without image_size): plain settings
    plain = {
        k: v
        for k, v in vars(tokenizer).items()
        if isinstance(v, int | float | str | bool | tuple | list | None)
    }
    return {"class": type(tokenizer).__name__, **{k: v for k, v in plain.items() if not k.startswith("_")}}
