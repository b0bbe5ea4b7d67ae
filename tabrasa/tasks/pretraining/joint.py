"""Self-supervised pretraining of one backbone instance on several modalities at once.

The joint counterpart of the single-modality objectives: every task (a name in the JointDataModule) keeps
its own objective — masked tokens for text and proteins, masked patches for image patches and audio
frames, or causal language modelling — built as the single-task module itself, so a task is hidden,
predicted and scored exactly as in `configs/pretrain/{text,image,audio,protein}.yaml`; only the backbone
is one instance, owned here (each objective borrows it: `PretrainingTask.borrow_backbone`). One optimizer
step trains one task, drawn by the JointDataModule's schedule, as in joint supervised training.

Logged: `{task}/{stage}/loss` (and `acc`, `ppl` for token objectives), `train/loss`, and the stated
aggregate `{stage}/loss_mean`, the unweighted mean of the tasks' validation losses, on which the best
checkpoint is selected. The losses are of different kinds (cross-entropy in nats, mean squared error of
normalised patches), so the mean ranks checkpoints of one run; it is no score to compare across runs.
At the end of `fit`, `export_dir/<task>/` receives each task's backbone + embedder as a `tabrasa`
checkpoint folder, which that modality's task config starts from with `pretrained: {family: tabrasa}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_info, rank_zero_warn
from torch import nn

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining.backbone_export import save_backbone
from tabrasa.tasks.pretraining.base import PretrainingTask
from tabrasa.tasks.pretraining.clm import CausalLanguageModel
from tabrasa.tasks.pretraining.mlm import MaskedTokenModel
from tabrasa.tasks.pretraining.mpm import MaskedPatchModel
from tabrasa.tasks.schedule import OptimConfig, adamw_warmup_cosine
from tabrasa.tasks.vocabulary_in_checkpoints import VocabularyInCheckpoints
from tabrasa.tokenizers.base import Batch, Tokenizer

ObjectiveName = Literal["masked_tokens", "masked_patches", "causal"]
OBJECTIVES: dict[str, type[PretrainingTask]] = {
    "masked_tokens": MaskedTokenModel,
    "masked_patches": MaskedPatchModel,
    "causal": CausalLanguageModel,
}
STAGES = ("train", "val")


def default_objective(tokenizer: Tokenizer, dim: int) -> ObjectiveName:
    """Masked tokens where the embedder has a token table (text, protein), masked patches otherwise."""
    embedder = tokenizer.embedder(dim)
    return (
        "masked_tokens"
        if isinstance(getattr(embedder, "token_embed", None), nn.Embedding)
        else "masked_patches"
    )


class JointPretraining(VocabularyInCheckpoints, pl.LightningModule):
    """tokenizer / num_outputs: one per task, linked from the JointDataModule (num_outputs is ignored).
    backbone: the one shared backbone. objectives: task → {"kind": masked_tokens | masked_patches | causal,
    plus that objective's settings, e.g. mask_ratio}; a task left out gets its modality's masked objective
    with default settings. loss_weights: task → weight (1.0). export_dir: where `fit` writes each task's
    backbone + embedder (None: nothing)."""

    selection_metric: tuple[str, Literal["min", "max"]] = ("val/loss_mean", "min")

    def __init__(
        self,
        tokenizer: Mapping[str, Tokenizer],
        backbone: nn.Module,
        num_outputs: Mapping[str, int] | None = None,
        objectives: dict[str, dict[str, Any]] | None = None,
        loss_weights: dict[str, float] | None = None,
        optimizer: OptimConfig | None = None,
        export_dir: str | None = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["tokenizer", "backbone"])
        self.names = list(tokenizer)
        if not self.names:
            raise UserError("joint pretraining needs at least one task")
        for setting, keys in (("objectives", objectives), ("loss_weights", loss_weights)):
            unknown = sorted(set(keys or {}) - set(self.names))
            if unknown:
                raise UserError(
                    f"{setting} names tasks {unknown} that the data module does not have: {self.names}"
                )
        self.backbone = backbone
        settings = objectives or {}
        self.objectives = nn.ModuleDict(
            {name: self._objective(name, tokenizer[name], settings.get(name, {})) for name in self.names}
        )
        self.loss_weights = {name: float((loss_weights or {}).get(name, 1.0)) for name in self.names}
        negative = {name: w for name, w in self.loss_weights.items() if w < 0}
        if negative:
            raise UserError(f"loss_weights {negative} must be >= 0")
        self.optim = optimizer or OptimConfig()
        self.export_dir = export_dir

    def vocabulary_tokenizers(self) -> dict[str, Tokenizer]:
        return {name: objective.tokenizer for name, objective in self.objectives.items()}

    def _objective(self, name: str, tokenizer: Tokenizer, settings: Mapping[str, Any]) -> PretrainingTask:
        settings = dict(settings)
        kind = settings.pop("kind", None) or default_objective(tokenizer, int(self.backbone.dim))
        if kind not in OBJECTIVES:
            raise UserError(
                f"task {name!r}: objective kind={kind!r} is not known; choose one of {sorted(OBJECTIVES)}"
            )
        try:
            objective = OBJECTIVES[kind](tokenizer, self.backbone, **settings)
        except (UserError, TypeError) as error:  # TypeError: a setting this objective does not take
            raise UserError(f"task {name!r} ({kind}): {error}") from error
        objective.borrow_backbone()
        return objective

    # Steps -------------------------------------------------------------------------------------------
    def _run(self, task: str, batch: Batch, stage: str) -> torch.Tensor:
        objective = self.objectives[task]
        out = objective.step(batch)
        objective.stats[f"{stage}_stats"].update(out.loss_sum, out.correct, out.count)
        size = next(iter(batch.values())).shape[0]
        self.log(f"{task}/{stage}/step_loss", out.loss, batch_size=size, add_dataloader_idx=False)
        return out.loss

    def training_step(self, batch: tuple[str, Batch], batch_idx: int) -> torch.Tensor:
        task, task_batch = batch
        weighted = self.loss_weights[task] * self._run(task, task_batch, "train")
        self.log("train/loss", weighted, prog_bar=True, batch_size=next(iter(task_batch.values())).shape[0])
        return weighted

    def validation_step(self, batch: Batch, batch_idx: int, dataloader_idx: int = 0) -> None:
        self._run(self.names[dataloader_idx], batch, "val")

    def _log_stage(self, stage: str) -> None:
        values: dict[str, float] = {}
        for name in self.names:
            stats = self.objectives[name].stats[f"{stage}_stats"]
            if stats.update_count == 0:  # this task drew no batch this epoch
                continue
            computed = stats.compute()
            for key in ("loss", *self.objectives[name].logged):
                values[f"{name}/{stage}/{key}"] = computed[key]
            stats.reset()
        losses = [values[f"{n}/{stage}/loss"] for n in self.names if f"{n}/{stage}/loss" in values]
        self.log_dict(values, add_dataloader_idx=False)  # torchmetrics' compute already reduced ranks
        if losses:
            self.log(f"{stage}/loss_mean", sum(losses) / len(losses), prog_bar=True, add_dataloader_idx=False)

    def on_train_epoch_end(self) -> None:
        self._log_stage("train")

    def on_validation_epoch_end(self) -> None:
        self._log_stage("val")

    def on_fit_end(self) -> None:
        if self.export_dir is None or not self.trainer.is_global_zero:
            return
        for name in self.names:
            try:
                task = self.objectives[name]
                folder = save_backbone(
                    task.backbone, task.embedder, task.tokenizer, Path(self.export_dir) / name
                )
            except UserError as error:  # e.g. an embedder without a checkpoint spec: say so, keep the rest
                rank_zero_warn(f"task {name!r}: not exported ({error})")
                continue
            rank_zero_info(f"task {name!r}: backbone + embedder written to {folder}")

    def configure_optimizers(self) -> Any:
        return adamw_warmup_cosine(self, self.optim)
