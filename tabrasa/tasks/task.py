"""The LightningModule every task shares: tokenizer embedder → backbone → pooling → head.

Subclasses add the loss, the metrics and what `predict` returns. The backbone is any module with a
`dim` attribute that maps (x, mask, grid) to tokens: the transformer, or a CNN or LSTM baseline behind the
same interface, so only the inductive bias changes between runs.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Literal

import pytorch_lightning as pl
import torch
from torch import nn

from tabrasa.pretrained.api import load_into
from tabrasa.pretrained.config import PretrainedSource
from tabrasa.tasks.heads import LinearHead
from tabrasa.tasks.objectives import Objective
from tabrasa.tasks.pooling import Pooling, pool
from tabrasa.tasks.schedule import OptimConfig, adamw_warmup_cosine
from tabrasa.tasks.stage_hooks import StageSteps
from tabrasa.tasks.vocabulary_in_checkpoints import VocabularyInCheckpoints
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.tokenizers.token_permutation import TokenPermutation
from tabrasa.training.sharding import shard_blocks

STAGES = ("train", "val", "test")


def freeze(backbone: nn.Module, keep_norms_and_positions: bool = False) -> None:
    """Stop gradients to the backbone; optionally leave its LayerNorms and position table trainable."""
    if keep_norms_and_positions and not hasattr(backbone, "blocks"):
        raise ValueError(
            f'freeze_backbone="attention_and_mlp" needs a transformer backbone with blocks, not '
            f"{type(backbone).__name__}; use freeze_backbone: true"
        )
    backbone.requires_grad_(False)
    if keep_norms_and_positions:
        for module in backbone.modules():
            if isinstance(module, nn.LayerNorm):
                module.requires_grad_(True)
        positions = getattr(backbone, "positions", None)
        if isinstance(positions, nn.Module):
            positions.requires_grad_(True)


class TokenTask(VocabularyInCheckpoints, StageSteps, pl.LightningModule):
    """tokenizer and num_outputs come from the data module (linked by the CLI, never typed twice).
    backbone: the shared encoder (class_path in YAML). pooling: "cls" or "mean" over real tokens.
    pretrained: start the backbone (and, unless `load_embedder: false`, the embedder) from a checkpoint;
        every weight loads or it is an error, never a silent random init.
    freeze_backbone: True trains only the embedder and head (linear probing); "attention_and_mlp" freezes
        only the attention and MLP weights, so LayerNorms and positions train with the embedder and head:
        the Frozen Pretrained Transformer of Lu et al. 2021 ("Pretrained Transformers as Universal
        Computation Engines").
    permute_tokens: show the backbone its tokens in one fixed, seeded order (the permutation test,
        tabrasa/tokenizers/token_permutation.py), e.g. `--model.init_args.permute_tokens.seed 0`."""

    def __init__(
        self,
        tokenizer: Tokenizer,
        num_outputs: int,
        backbone: nn.Module,
        pooling: Pooling = "mean",
        head_dropout: float = 0.0,
        optimizer: OptimConfig | None = None,
        pretrained: PretrainedSource | None = None,
        freeze_backbone: bool | Literal["attention_and_mlp"] = False,
        permute_tokens: TokenPermutation | None = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["tokenizer", "backbone"])
        if not hasattr(backbone, "dim"):
            raise TypeError(
                f"backbone {type(backbone).__name__} has no `dim`; tabrasa backbones expose their width"
            )
        self.tokenizer = tokenizer
        self.embedder = tokenizer.embedder(backbone.dim)
        self.backbone = backbone
        self.head = LinearHead(backbone.dim, num_outputs, head_dropout)
        self.pooling = pooling
        self.optim = optimizer or OptimConfig()
        self.pretrained = pretrained
        self.permute_tokens = permute_tokens
        self._pretrained_loaded = False
        if freeze_backbone:
            freeze(self.backbone, keep_norms_and_positions=freeze_backbone == "attention_and_mlp")
        self.objective = self.make_objective(num_outputs)
        # Keys get a suffix: a ModuleDict key "train" would shadow nn.Module.train.
        self.metrics = nn.ModuleDict(
            {f"{stage}_metrics": self.objective.metrics().clone(prefix=f"{stage}/") for stage in STAGES}
        )

    # The metric `fit` selects its best checkpoint on (see tabrasa.training.BestCheckpoint).
    selection_metric: tuple[str, Literal["min", "max"]] = ("val/loss", "min")

    def load_pretrained_weights(self) -> None:
        """Copy the `pretrained` checkpoint's weights into the backbone (and embedder), once.

        Called when a run starts, after Lightning has restored any `--ckpt_path`: a run restored from its
        own checkpoint (resume, validate, test, predict) already holds fine-tuned weights, so the base
        checkpoint is not read again and may have moved or been deleted since. Python users who build a
        task by hand call it themselves before use."""
        if self.pretrained is None or self._pretrained_loaded:
            return
        self._pretrained_loaded = True
        if self._trainer is not None and self.trainer.ckpt_path:
            return
        source = self.pretrained
        embedder = self.embedder if source.load_embedder else None
        head = self.head if source.load_head else None
        load_into(source, self.backbone, embedder, head, tokenizer=self.tokenizer)

    def configure_model(self) -> None:
        """Under FSDP2 (tabrasa.training.sharding.FSDP2Strategy) shard each block, then the rest; a no-op
        under every other strategy. Base weights go in first: they load into whole tensors, not shards."""
        if self.device_mesh is not None:
            self.load_pretrained_weights()
            shard_blocks(self)

    def vocabulary_tokenizers(self) -> dict[str, Tokenizer]:
        return {"tokenizer": self.tokenizer}

    def on_fit_start(self) -> None:
        self.load_pretrained_weights()

    def on_validation_start(self) -> None:
        self.load_pretrained_weights()

    def on_test_start(self) -> None:
        self.load_pretrained_weights()

    def on_predict_start(self) -> None:
        self.load_pretrained_weights()

    @abstractmethod
    def make_objective(self, num_outputs: int) -> Objective:
        """The loss, metrics and predictions of this task (tabrasa.tasks.objectives)."""

    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return self.objective.loss(outputs, target)

    def metric_inputs(self, outputs: torch.Tensor) -> torch.Tensor:
        """Outputs in the form the metrics take (probabilities, or the regression values)."""
        return self.objective.predictions(outputs)

    def features(self, batch: Batch) -> torch.Tensor:
        """The pooled (B, D) representation, before the head."""
        tokens = self.embedder(batch)
        if self.permute_tokens is not None:
            tokens = self.permute_tokens(tokens)
        hidden = self.backbone(tokens.x, tokens.mask, grid=tokens.grid)
        return pool(hidden, tokens.mask, self.pooling)

    def forward(self, batch: Batch) -> torch.Tensor:
        return self.head(self.features(batch))

    def stage_step(self, batch: Batch, stage: str) -> torch.Tensor:
        if "label" not in batch:
            raise KeyError(
                f"{stage} batch has no `label`; the data module must provide labels to train or evaluate"
            )
        target = batch["label"]
        outputs = self(batch)
        loss = self.loss(outputs, target)
        size = target.shape[0]
        self.log(f"{stage}/loss", loss, prog_bar=True, batch_size=size, sync_dist=stage != "train")
        metrics = self.metrics[f"{stage}_metrics"]
        metrics(self.metric_inputs(outputs.detach()), target)
        self.log_dict(metrics, prog_bar=stage != "train", batch_size=size, on_step=False, on_epoch=True)
        return loss

    def predict_step(self, batch: Batch, batch_idx: int, dataloader_idx: int = 0) -> torch.Tensor:
        return self.metric_inputs(self(batch))

    def configure_optimizers(self) -> Any:
        return adamw_warmup_cosine(self, self.optim)
