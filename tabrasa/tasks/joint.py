"""One backbone instance, several tasks: the LightningModule of a joint multi-modal run.

Each task has its own embedder (built from its tokenizer, so text, image patches, audio frames and
protein residues all become tokens of the backbone's width), its own head and objective, and a loss
weight; every task's tokens go through the *same* backbone weights. An optional learned task embedding
(one vector per task, added to every token) tells the backbone which input it is reading, as the
modality/type embeddings of multi-modal transformers do (e.g. VATT, Akbari et al. 2021); it is off by
default so the backbone must tell modalities apart from the tokens alone, and is measured both ways.

Logged: `{task}/{stage}/{metric}` for every task (`imdb/val/acc`, `psortb/test/f1`), `train/loss` (the
weighted loss of the step's task), and the stated aggregate `{stage}/acc_mean`: the unweighted mean of
the classification tasks' accuracies (`{stage}/loss_mean` when no task classifies), on which the best
checkpoint is selected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_only
from rich.console import Console
from rich.table import Table
from torch import nn
from torchmetrics import MeanMetric

from tabrasa.errors import UserError
from tabrasa.tasks.heads import LinearHead
from tabrasa.tasks.objectives import Objective, ObjectiveKind, make_objective
from tabrasa.tasks.pooling import Pooling, pool
from tabrasa.tasks.schedule import OptimConfig, adamw_warmup_cosine
from tabrasa.tasks.stage_hooks import StageEpochEnds
from tabrasa.tasks.vocabulary_in_checkpoints import VocabularyInCheckpoints
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.training.sharding import shard_blocks

STAGES = ("train", "val", "test")


class JointTask(VocabularyInCheckpoints, StageEpochEnds, pl.LightningModule):
    """tokenizer / num_outputs: one per task, linked from the JointDataModule (never typed).
    backbone: the one shared backbone (transformer or a CNN/LSTM baseline).
    objectives: task → "classification" (default) or "regression". loss_weights: task → weight (1.0).
    task_embedding: add a learned per-task vector to every token."""

    def __init__(
        self,
        tokenizer: Mapping[str, Tokenizer],
        num_outputs: Mapping[str, int],
        backbone: nn.Module,
        objectives: dict[str, ObjectiveKind] | None = None,
        loss_weights: dict[str, float] | None = None,
        task_embedding: bool = False,
        pooling: Pooling = "mean",
        head_dropout: float = 0.0,
        label_smoothing: float = 0.0,
        optimizer: OptimConfig | None = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["tokenizer", "backbone"])
        self.names = list(tokenizer)
        self.tokenizers = dict(tokenizer)
        check_task_names(self.names, num_outputs, objectives, loss_weights)
        dim = int(backbone.dim)
        self.backbone = backbone
        self.embedders = nn.ModuleDict({name: tok.embedder(dim) for name, tok in tokenizer.items()})
        self.heads = nn.ModuleDict(
            {name: LinearHead(dim, num_outputs[name], head_dropout) for name in self.names}
        )
        self.task_embed = nn.Embedding(len(self.names), dim) if task_embedding else None
        if self.task_embed is not None:
            nn.init.trunc_normal_(self.task_embed.weight, std=0.02)
        self.objectives: dict[str, Objective] = {
            name: build_objective(name, (objectives or {}).get(name, "classification"), num_outputs[name],
                                  label_smoothing)
            for name in self.names
        }  # fmt: skip
        self.loss_weights = {name: float((loss_weights or {}).get(name, 1.0)) for name in self.names}
        self.pooling = pooling
        self.optim = optimizer or OptimConfig()
        self.metrics = nn.ModuleDict(
            {f"{name}__{stage}": self.objectives[name].metrics() for name in self.names for stage in STAGES}
        )
        self.losses = nn.ModuleDict({f"{n}__{s}": MeanMetric() for n in self.names for s in STAGES})
        classifying = [n for n in self.names if self.objectives[n].kind == "classification"]
        self.aggregate = ("acc", classifying) if classifying else ("loss", self.names)
        self.selection_metric: tuple[str, Literal["min", "max"]] = (
            ("val/acc_mean", "max") if classifying else ("val/loss_mean", "min")
        )
        for name in self.names:
            if self.embedders[name].dim != dim:
                raise UserError(
                    f"task {name!r}: its embedder makes tokens of width {self.embedders[name].dim} but the "
                    f"shared backbone is {dim} wide; give the task's tokenizer the backbone's width"
                )

    def vocabulary_tokenizers(self) -> dict[str, Tokenizer]:
        return self.tokenizers

    # The model ---------------------------------------------------------------------------------------
    def features(self, task: str, batch: Batch) -> torch.Tensor:
        """One task's pooled (B, D) representation from the shared backbone."""
        tokens = self.embedders[task](batch)
        x = tokens.x  # (B, N, D)
        if self.task_embed is not None:
            x = x + self.task_embed.weight[self.names.index(task)]  # the same vector on every token
        hidden = self.backbone(x, tokens.mask, grid=tokens.grid)
        return pool(hidden, tokens.mask, self.pooling)

    def forward(self, task: str, batch: Batch) -> torch.Tensor:
        return self.heads[task](self.features(task, batch))

    # Steps -------------------------------------------------------------------------------------------
    def _step(self, task: str, batch: Batch, stage: str) -> torch.Tensor:
        if "label" not in batch:
            raise UserError(f"task {task!r}: the {stage} batch has no `label`; its data module must label it")
        target = batch["label"]
        outputs = self(task, batch)
        objective = self.objectives[task]
        loss = objective.loss(outputs, target)
        self.metrics[f"{task}__{stage}"].update(objective.predictions(outputs.detach()), target)
        self.losses[f"{task}__{stage}"].update(loss.detach(), weight=target.shape[0])
        return loss

    def training_step(self, batch: tuple[str, Batch], batch_idx: int) -> torch.Tensor:
        task, task_batch = batch
        loss = self._step(task, task_batch, "train")
        size = task_batch["label"].shape[0]
        self.log(f"{task}/train/loss", loss, batch_size=size)
        weighted = self.loss_weights[task] * loss
        self.log("train/loss", weighted, prog_bar=True, batch_size=size)
        return weighted

    def validation_step(self, batch: Batch, batch_idx: int, dataloader_idx: int = 0) -> None:
        self._step(self.names[dataloader_idx], batch, "val")

    def test_step(self, batch: Batch, batch_idx: int, dataloader_idx: int = 0) -> None:
        self._step(self.names[dataloader_idx], batch, "test")

    def predict_step(self, batch: Batch, batch_idx: int, dataloader_idx: int = 0) -> dict[str, Any]:
        task = self.names[dataloader_idx]
        return {"task": task, "predictions": self.objectives[task].predictions(self(task, batch))}

    # Epoch-end logging: per task, then the stated aggregate ------------------------------------------
    def end_epoch(self, stage: str) -> None:
        values: dict[str, torch.Tensor] = {}
        for name in self.names:
            metrics, losses = self.metrics[f"{name}__{stage}"], self.losses[f"{name}__{stage}"]
            if losses.update_count == 0:  # this task had no batch this epoch (possible in training)
                continue
            computed = {key: value for key, value in metrics.compute().items()}
            computed["loss"] = losses.compute()
            for key, value in computed.items():
                values[f"{name}/{stage}/{key}"] = value
            metrics.reset()
            losses.reset()
        metric, members = self.aggregate
        present = [values[f"{n}/{stage}/{metric}"] for n in members if f"{n}/{stage}/{metric}" in values]
        # Already reduced across ranks by torchmetrics' compute, so no sync_dist here.
        self.log_dict(values, prog_bar=False, add_dataloader_idx=False)
        if present:
            mean = torch.stack(present).mean()
            self.log(f"{stage}/{metric}_mean", mean, prog_bar=True, add_dataloader_idx=False)

    def on_test_epoch_end(self) -> None:
        super().on_test_epoch_end()
        self.print_task_table("test")

    @rank_zero_only
    def print_task_table(self, stage: str) -> None:
        """One row per task (its metrics), then the aggregate: the table `fit` ends with."""
        logged = {k: float(v) for k, v in self.trainer.callback_metrics.items()}
        columns = sorted(
            {k.split("/")[-1] for k in logged if k.split("/")[0] in self.names and f"/{stage}/" in k}
        )
        table = Table(title=f"{stage} metrics per task")
        for column in ["task", *columns]:
            table.add_column(column)
        for name in self.names:
            table.add_row(name, *(_shown(logged.get(f"{name}/{stage}/{c}")) for c in columns))
        metric = self.aggregate[0]
        if f"{stage}/{metric}_mean" in logged:
            cells = [_shown(logged[f"{stage}/{metric}_mean"]) if c == metric else "" for c in columns]
            table.add_row(f"mean ({metric})", *cells)
        Console().print(table)

    def configure_model(self) -> None:
        """Under FSDP2 (tabrasa.training.sharding) shard each block of the shared backbone, then the rest
        (every task's embedder and head); a no-op under every other strategy."""
        shard_blocks(self)

    def configure_optimizers(self) -> Any:
        return adamw_warmup_cosine(self, self.optim)


def _shown(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def check_task_names(
    names: list[str],
    num_outputs: Mapping[str, int],
    objectives: Mapping[str, str] | None,
    loss_weights: Mapping[str, float] | None,
) -> None:
    """Every per-task setting names a task that exists; weights are non-negative."""
    if not names:
        raise UserError("a joint model needs at least one task")
    for setting, keys in (
        ("num_outputs", num_outputs),
        ("objectives", objectives),
        ("loss_weights", loss_weights),
    ):
        unknown = sorted(set(keys or {}) - set(names))
        if unknown:
            raise UserError(f"{setting} names tasks {unknown} that the data module does not have: {names}")
    if set(num_outputs) != set(names):
        raise UserError(f"num_outputs has tasks {sorted(num_outputs)} but the tokenizers have {names}")
    for name, weight in (loss_weights or {}).items():
        if weight < 0:
            raise UserError(f"loss_weights[{name!r}]={weight} must be >= 0")


def build_objective(name: str, kind: ObjectiveKind, num_outputs: int, label_smoothing: float) -> Objective:
    try:
        return make_objective(kind, num_outputs, label_smoothing if kind == "classification" else 0.0)
    except UserError as error:
        raise UserError(f"task {name!r}: {error}") from error
