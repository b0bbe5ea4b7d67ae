"""A tabrasa training run's checkpoint → a reusable `tabrasa`-family folder (`tabrasa convert --family
checkpoint`): the shared backbone, one task's embedder, its tokenizer's spec and files, and that task's
head in a separate `head.safetensors`.

    tabrasa convert --family checkpoint --source runs/joint/version_0/checkpoints/best-….ckpt \
        --config runs/joint/version_0/config.yaml --task imdb --out runs/imdb-from-joint

Any config then starts from it with `pretrained: {family: tabrasa, path: DIR}` (add `load_head: true` to
keep the head). The run's config rebuilds the model, so every module comes back with its own class and
spec; the checkpoint's weights are then loaded strictly. Single-task runs hold `backbone.*`, `embedder.*`,
`head.*`; joint runs (JointTask) `backbone.*`, `embedders.<task>.*`, `heads.<task>.*` and, with
`task_embedding: true`, `task_embed.weight`: the task's vector is added to every token before the
backbone, which is the same as adding it to every row of a learned position table, where it is folded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from torch import nn

from tabrasa.backbone.encoder import Encoder
from tabrasa.errors import UserError
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.head_file import HEAD_FILE
from tabrasa.pretrained.tabrasa_format import save_tabrasa
from tabrasa.tasks.joint import JointTask
from tabrasa.tokenizers.base import Embedder, Tokenizer
from tabrasa.tokenizers.image import ImageTokenizerSpec
from tabrasa.tokenizers.specs import Spec
from tabrasa.tokenizers.text import TextTokenizer
from tabrasa.training.rebuild import rebuild_run
from tabrasa.training.safetensors_io import load_checkpoint


@dataclass
class TaskModules:
    """One task's modules out of a built run, and the checkpoint prefixes their weights carry."""

    name: str
    backbone: nn.Module
    embedder: Embedder
    head: nn.Module
    tokenizer: Tokenizer
    prefixes: dict[str, str]  # module → state-dict prefix in the checkpoint
    task_vector: str | None = None  # the joint model's task embedding row, when it has one
    task_index: int = 0


def convert_run(checkpoint: str | Path, config: str | Path, out: str | Path, task: str | None = None) -> Path:
    """Write the tabrasa folder for `task` (None: the run's only task) of a training checkpoint."""
    state = load_checkpoint(checkpoint).get("state_dict")
    if not isinstance(state, dict):
        raise UserError(f"{checkpoint} holds no state_dict; give a checkpoint written by `tabrasa fit`")
    modules = task_modules(config, task, state, str(checkpoint))
    _load(modules, state, str(checkpoint))
    if not isinstance(modules.backbone, Encoder):
        raise UserError(
            f"{checkpoint}: the backbone is a {type(modules.backbone).__name__}; the tabrasa format holds "
            f"the transformer Encoder only (a CNN or LSTM baseline is reused from its training checkpoint)"
        )
    pconf = PretrainedConfig(
        "tabrasa",
        modules.backbone.config,
        _spec(modules.embedder, "embedder", modules.name),
        *_tokenizer_spec(modules.tokenizer, out),
    )
    folder = save_tabrasa(modules.backbone, modules.embedder, pconf, out, Path(out))
    head = {k: v.detach().clone().contiguous() for k, v in modules.head.state_dict().items()}
    outputs = str(head["fc.weight"].shape[0]) if "fc.weight" in head else ""
    save_file(head, str(folder / HEAD_FILE), metadata={"task": modules.name, "num_outputs": outputs})
    return folder


def task_modules(config: str | Path, task: str | None, state: dict[str, Any], source: str) -> TaskModules:
    """Build the run's model from its config and pick `task`'s modules."""
    rebuilt = rebuild_run(config)
    model, data = rebuilt.model, rebuilt.datamodule
    if isinstance(model, JointTask):
        names = list(model.names)
        if task is None and len(names) > 1:
            raise UserError(f"{source} is a joint run of tasks {names}; choose one with --task")
        name = task or names[0]
        if name not in names:
            raise UserError(f"--task {name!r} is not a task of {source}; its tasks are {names}")
        prefixes = {"embedder": f"embedders.{name}.", "head": f"heads.{name}."}
        vector = "task_embed.weight" if model.task_embed is not None else None
        return TaskModules(name, model.backbone, model.embedders[name], model.heads[name],
                           data.tokenizer[name], prefixes, vector, names.index(name))  # fmt: skip
    name = task or type(data).__name__  # a single-task run has one task: --task only names it
    return TaskModules(name, model.backbone, model.embedder, model.head, data.tokenizer,
                       {"embedder": "embedder.", "head": "head."})  # fmt: skip


def _section(state: dict[str, Any], prefix: str) -> dict[str, torch.Tensor]:
    return {k.removeprefix(prefix): v for k, v in state.items() if k.startswith(prefix)}


def _load(modules: TaskModules, state: dict[str, Any], source: str) -> None:
    """Every module's weights from the checkpoint, strictly; the task vector folded into the positions."""
    parts = {"backbone": "backbone.", **modules.prefixes}
    for part, prefix in parts.items():
        module: nn.Module = getattr(modules, part)
        weights = _section(state, prefix)
        try:
            module.load_state_dict(weights, strict=True)
        except RuntimeError as error:
            raise UserError(
                f"{source}: the {part} weights under '{prefix}' do not fit the model its config builds "
                f"(is --config the run's own config.yaml?): {error}"
            ) from error
    if modules.task_vector is not None:
        _fold_task_vector(modules, state[modules.task_vector][modules.task_index], source)


def _fold_task_vector(modules: TaskModules, vector: torch.Tensor, source: str) -> None:
    positions = getattr(modules.backbone, "positions", None)
    table = getattr(positions, "weight", None)
    if not isinstance(table, nn.Parameter):
        raise UserError(
            f"{source}: task {modules.name!r} was trained with a task embedding (added to every token), "
            f"which folds into a learned position table, but this backbone has none; retrain with "
            f"task_embedding: false, or keep using the joint checkpoint"
        )
    with torch.no_grad():
        table.add_(vector)


def _spec(obj: Any, what: str, task: str) -> Spec:
    to_spec = getattr(obj, "to_spec", None)
    if to_spec is None:
        raise UserError(
            f"task {task!r}: its {what} {type(obj).__name__} has no typed spec, so a tabrasa folder cannot "
            f"rebuild it; use a tokenizer whose embedder has one (text, bytes, image, protein, ESM, audio, "
            f"AST, Whisper)"
        )
    spec: Spec = to_spec()
    return spec


def _tokenizer_spec(tokenizer: Tokenizer, out: str | Path) -> tuple[Spec | None, tuple[int, int] | None, int]:
    """The tokenizer's spec (its files saved into `out`), and the patch grid of image runs."""
    inner = getattr(tokenizer, "inner", tokenizer)  # a PretrainedTokenizer wraps the family's own
    if isinstance(inner, TextTokenizer):
        Path(out).mkdir(parents=True, exist_ok=True)
        inner.save(Path(out) / "tokenizer.json")
        return inner.to_spec("tokenizer.json"), None, 0
    try:
        spec = inner.to_spec() if hasattr(inner, "to_spec") else None
    except ValueError as error:  # e.g. an image tokenizer without a fixed image_size
        raise UserError(f"the task's tokenizer cannot be stored: {error} (in the run's config)") from error
    if isinstance(spec, ImageTokenizerSpec):
        grid = (spec.image_size[0] // spec.patch_size[0], spec.image_size[1] // spec.patch_size[1])
        return spec, grid, int(spec.cls_token)
    return spec, None, 0
