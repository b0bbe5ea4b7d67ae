"""What every pretraining objective shares: the tokenizer's embedder → the shared backbone → an objective
head, epoch-level token-weighted metrics, the optimiser, and (optionally) writing the backbone as a
`tabrasa` checkpoint folder when `fit` ends, so a task config can start from it with `pretrained:`."""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, Literal

import pytorch_lightning as pl
import torch
from torch import nn

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining.backbone_export import save_backbone
from tabrasa.tasks.pretraining.stats import MaskedStats
from tabrasa.tasks.schedule import OptimConfig, adamw_warmup_cosine
from tabrasa.tasks.stage_hooks import StageEpochEnds, StageSteps
from tabrasa.tasks.vocabulary_in_checkpoints import VocabularyInCheckpoints
from tabrasa.tokenizers.base import Batch, Tokenizer, Tokens
from tabrasa.training.sharding import FSDP2_NAME, shard_blocks

STAGES = ("train", "val", "test")


@dataclass
class StepOutput:
    """loss: the mean over predicted tokens (0, never NaN, when there are none); loss_sum, correct, count:
    the token-weighted sums the epoch metrics are built from."""

    loss: torch.Tensor
    loss_sum: torch.Tensor
    correct: torch.Tensor
    count: torch.Tensor


def mean_over(loss_sum: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """loss_sum / count, and exactly 0 (still in the graph) when nothing was predicted."""
    return loss_sum / count.clamp(min=1)


class PretrainingTask(VocabularyInCheckpoints, StageSteps, StageEpochEnds, pl.LightningModule):
    """tokenizer: linked from the data module. backbone: the shared encoder (class_path in YAML).
    num_outputs: linked from the data module by the CLI and ignored (a pretraining head's width comes from
    the tokenizer). export_dir: where `fit` writes the backbone and embedder as a `tabrasa` checkpoint
    folder at its end (family `tabrasa` in a task config's `pretrained:` block); None writes nothing."""

    # The metric `fit` selects its best checkpoint on (tabrasa.training.BestCheckpoint).
    selection_metric: tuple[str, Literal["min", "max"]] = ("val/loss", "min")
    # Epoch metrics this objective logs, besides loss (keys of MaskedStats.compute()).
    logged: tuple[str, ...] = ()

    def __init__(
        self,
        tokenizer: Tokenizer,
        backbone: nn.Module,
        num_outputs: int | None = None,
        optimizer: OptimConfig | None = None,
        export_dir: str | None = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["tokenizer", "backbone"])
        if not hasattr(backbone, "dim"):
            raise TypeError(f"backbone {type(backbone).__name__} has no `dim`; tabrasa backbones expose it")
        self.tokenizer = tokenizer
        self.embedder = tokenizer.embedder(backbone.dim)
        self.backbone = backbone
        self.optim = optimizer or OptimConfig()
        self.export_dir = export_dir
        # Keys get a suffix: a ModuleDict key "train" would shadow nn.Module.train.
        self.stats = nn.ModuleDict({f"{stage}_stats": MaskedStats() for stage in STAGES})

    def vocabulary_tokenizers(self) -> dict[str, Tokenizer]:
        return {"tokenizer": self.tokenizer}

    def borrow_backbone(self) -> None:
        """Keep the backbone as a plain reference that another module owns and registers: a joint
        pretraining run (JointPretraining) holds one backbone for every task's objective, so its weights
        appear once in the parameters, the optimizer and the checkpoint, not once per task."""
        backbone = self._modules.pop("backbone")
        object.__setattr__(self, "backbone", backbone)  # bypasses nn.Module's registration on purpose

    def encode(self, tokens: Tokens) -> torch.Tensor:
        """Contextual tokens (B, N, D)."""
        return self.backbone(tokens.x, tokens.mask, grid=tokens.grid)

    @abstractmethod
    def step(self, batch: Batch) -> StepOutput:
        """Hide, predict and score one batch."""

    def stage_step(self, batch: Batch, stage: str) -> torch.Tensor:
        out = self.step(batch)
        size = next(iter(batch.values())).shape[0]
        self.log(f"{stage}/loss", out.loss, prog_bar=True, batch_size=size, sync_dist=stage != "train")
        self.stats[f"{stage}_stats"].update(out.loss_sum, out.correct, out.count)
        return out.loss

    def end_epoch(self, stage: str) -> None:
        values = self.stats[f"{stage}_stats"].compute()
        self.log_dict({f"{stage}/{k}": values[k] for k in self.logged}, prog_bar=stage != "train")
        self.stats[f"{stage}_stats"].reset()

    def configure_model(self) -> None:
        """Under FSDP2 (tabrasa.training.sharding) shard each block, then the rest; a no-op otherwise."""
        if self.device_mesh is not None and self.export_dir is not None:
            raise UserError(
                f"export_dir={self.export_dir}: the backbone export needs whole weights, but "
                f"--trainer.strategy {FSDP2_NAME} keeps each rank's shard; train with "
                "--trainer.strategy ddp, or drop export_dir and consolidate the sharded checkpoint "
                "afterwards (tabrasa.training.sharded_checkpoint.consolidate_checkpoint, docs/scaling-out.md)"
            )
        shard_blocks(self, forward_methods=[name for name in ("step", "logits") if hasattr(self, name)])

    def on_fit_end(self) -> None:
        if self.export_dir is not None and self.trainer.is_global_zero:
            save_backbone(self.backbone, self.embedder, self.tokenizer, self.export_dir)

    def configure_optimizers(self) -> Any:
        return adamw_warmup_cosine(self, self.optim)
