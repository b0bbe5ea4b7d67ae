"""What a server answers with: the tasks of one trained run, each a Predictor over the PyTorch model or
its ONNX export, with the tokenizer and modality a request is checked against.

A single-task run (Classifier, Regressor) is one task, named after its modality. A joint run is one task
per name in its config (`imdb`, `psortb`, ...), each a `TaskView` of the shared backbone; `task=` serves
just one of them. The PyTorch module is kept beside an ONNX predictor too: the graph outputs logits only,
so attention is drawn from the module the graph was exported from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from torch import nn

from tabrasa.deploy.predictor import Predictor
from tabrasa.deploy.run import TrainedRun, class_names
from tabrasa.errors import UserError
from tabrasa.inspect.source import Modality, modality_of
from tabrasa.serve.joint import TaskView
from tabrasa.serve.onnx_backend import OnnxModel, ensure_export
from tabrasa.tasks.joint import JointTask
from tabrasa.tasks.task import TokenTask
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.training.rebuild import rebuild_run
from tabrasa.training.run_folder import locate_run

Backend = Literal["pytorch", "onnx"]


@dataclass(frozen=True)
class ServeSource:
    """Where the served model comes from. run: a run folder or checkpoint; ckpt: best, last or a path;
    task: serve only this task of a joint run; onnx: run the exported graph with ONNX Runtime, kept in
    onnx_dir (a joint run's tasks in onnx_dir/<task>/)."""

    run: str
    ckpt: str = "best"
    task: str | None = None
    onnx: bool = False
    onnx_dir: str | None = None


@dataclass
class ServedTask:
    name: str
    modality: Modality
    predictor: Predictor
    model: nn.Module  # the PyTorch task, for attention
    tokenizer: Tokenizer
    class_names: Sequence[str] | None

    def info(self) -> dict[str, Any]:
        """What the page and /info show: the input it reads, its classes and its input limits."""
        limits = {
            key: getattr(self.tokenizer, key)
            for key in ("max_length", "max_frames", "image_size", "channels", "sample_rate", "truncation")
            if getattr(self.tokenizer, key, None) is not None
        }
        classes = list(self.class_names) if self.class_names is not None else None
        return {"name": self.name, "modality": self.modality, "classes": classes, "limits": limits}


@dataclass
class ServedModel:
    tasks: dict[str, ServedTask]
    backend: Backend
    run: str
    parity: dict[str, float] = field(default_factory=dict)  # task → ONNX vs PyTorch max abs logit diff

    def info(self) -> dict[str, Any]:
        return {"run": self.run, "backend": self.backend, "tasks": [t.info() for t in self.tasks.values()]}


def task_runs(source: ServeSource) -> dict[str, TrainedRun]:
    """The run's tasks as single-task TrainedRuns, in config order (one for a single-task run)."""
    config, checkpoint = locate_run(source.run, source.ckpt)
    rebuilt = rebuild_run(config, checkpoint)
    model = rebuilt.model.eval()
    if isinstance(model, TokenTask):
        if source.task is not None:
            raise UserError(f"--task {source.task}: {config} is a single-task run; leave --task out")
        names = list(class_names(rebuilt.datamodule)) if model.objective.kind == "classification" else None
        return {modality_of(model.tokenizer): TrainedRun(model, model.tokenizer, names, config, checkpoint)}
    if not isinstance(model, JointTask):
        raise UserError(
            f"{config} trains a {type(model).__name__}; `tabrasa serve` serves classifiers, regressors and "
            f"joint runs of them"
        )
    chosen = model.names if source.task is None else [source.task]
    unknown = sorted(set(chosen) - set(model.names))
    if unknown:
        raise UserError(
            f"--task {source.task}: the joint run {config} has no such task; its tasks: {model.names}"
        )
    runs = {}
    for name in chosen:
        tokenizer = rebuilt.datamodule.tokenizer[name]  # the data module's, from which the embedder was built
        kind = model.objectives[name].kind
        names = list(class_names(rebuilt.datamodule.tasks[name])) if kind == "classification" else None
        runs[name] = TrainedRun(TaskView(model, name), tokenizer, names, config, checkpoint)
    return runs


def load_served(source: ServeSource, device: str = "cpu") -> ServedModel:
    """Rebuild the run and make one Predictor per task (exporting the graphs first under `onnx`)."""
    if source.onnx and source.onnx_dir is None:
        raise ValueError("ServeSource(onnx=True) needs onnx_dir, the folder the graphs are kept in")
    onnx_dir = Path(source.onnx_dir) if source.onnx and source.onnx_dir else None
    return served_model(task_runs(source), str(source.run), device, onnx_dir)


def served_model(
    runs: dict[str, TrainedRun], name: str, device: str = "cpu", onnx_dir: Path | None = None
) -> ServedModel:
    """Trained runs by task name → the served model; with `onnx_dir`, each predicts through its graph
    (kept in onnx_dir, or onnx_dir/<task> for several tasks) while attention comes from the module."""
    tasks, parities = {}, {}
    for task, run in runs.items():
        if onnx_dir is not None:
            graph, difference = ensure_export(run, onnx_dir if len(runs) == 1 else onnx_dir / task)
            if difference is not None:
                parities[task] = difference
            onnx = OnnxModel(graph, run.model.objective, device)
            predictor = Predictor(TrainedRun(onnx, run.tokenizer, run.class_names, run.config_path,
                                             run.checkpoint_path))  # fmt: skip
            module = run.model.cpu().eval()
        else:
            predictor = Predictor(run, device)
            module = predictor.model
        modality = modality_of(run.tokenizer)
        tasks[task] = ServedTask(task, modality, predictor, module, predictor.tokenizer, run.class_names)
    return ServedModel(tasks, "pytorch" if onnx_dir is None else "onnx", name, parities)
