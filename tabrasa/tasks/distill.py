"""Knowledge distillation (Hinton, Vinyals & Dean 2015, "Distilling the Knowledge in a Neural Network").

The student is this module's own embedder → backbone → head, built like any Classifier's; the teacher is a
trained run whose softened outputs it learns to match:

    loss = soft_weight · T² · KL(softmax(z_t / T) ‖ softmax(z_s / T)) + label_weight · CE(z_s, y)

T² keeps the soft term's gradients on the scale of the label term's as T changes (Hinton et al. §2). The
teacher is frozen and stays in eval mode (no dropout in its targets). It reads the student's batches, so
both must share one tokenizer; widths, depths and attention kinds may differ. It is loaded when fitting
starts and kept out of the state dict, so a distilled checkpoint is a plain student for predict and export.
With `teacher_cache`, its outputs are remembered by input (tabrasa.tasks.teacher_outputs) and kept in that
file, so the teacher runs once per training example, not once per example and epoch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.errors import UserError
from tabrasa.tasks.classifier import Classifier
from tabrasa.tasks.teacher_outputs import TeacherOutputs, checkpoint_digest
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.tokenizers.text import ids_moved
from tabrasa.training.rebuild import rebuild_run
from tabrasa.training.run_folder import locate_run


def distillation_loss(
    student: torch.Tensor,
    teacher: torch.Tensor,
    target: torch.Tensor,
    temperature: float,
    soft_weight: float,
    label_weight: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(total, soft term, label term) for logits (B, C) and class indices (B,)."""
    T = temperature
    soft = F.kl_div(
        F.log_softmax(student.float() / T, dim=-1),
        F.log_softmax(teacher.float() / T, dim=-1),
        log_target=True,
        reduction="batchmean",
    ) * (T * T)
    hard = F.cross_entropy(student.float(), target)
    return soft_weight * soft + label_weight * hard, soft, hard


class Distill(Classifier):
    """teacher: a trained classification run (runs/NAME/version_N) or its checkpoint file; teacher_ckpt:
    best, last or a path. temperature: T > 0 softens both distributions. soft_weight / label_weight: the
    weights of the distillation and label terms (Hinton et al. use a small label weight; 0 drops labels).
    teacher_cache: a file keeping the teacher's outputs by input across epochs and runs (None: none kept)."""

    def __init__(
        self,
        *args: Any,
        teacher: str,
        teacher_ckpt: str = "best",
        temperature: float = 2.0,
        soft_weight: float = 0.5,
        label_weight: float = 0.5,
        teacher_cache: str | None = None,
        **kwargs: Any,
    ) -> None:
        if temperature <= 0:
            raise UserError(f"temperature={temperature} must be > 0 (Hinton et al. use 1 to 20)")
        if soft_weight < 0 or label_weight < 0 or soft_weight + label_weight == 0:
            raise UserError(
                f"soft_weight={soft_weight} and label_weight={label_weight} must be >= 0 and not both 0"
            )
        super().__init__(*args, **kwargs)
        self.teacher_source = (teacher, teacher_ckpt)
        self.temperature = temperature
        self.soft_weight = soft_weight
        self.label_weight = label_weight
        self.teacher_cache = teacher_cache
        self._teacher: nn.Module | None = None  # set by set_teacher, outside the module tree

    @property
    def teacher(self) -> nn.Module:
        if self._teacher is None:
            raise RuntimeError(
                "the teacher is loaded when fitting starts; call set_teacher to use it earlier"
            )
        return self._teacher

    def set_teacher(self, teacher: nn.Module, tokenizer: Tokenizer | None = None) -> None:
        """Freeze `teacher` and keep it beside (not inside) the student, so it is neither trained, saved,
        nor switched to train mode with the student."""
        if tokenizer is not None:
            check_same_tokenizer(tokenizer, self.tokenizer)
        outputs = getattr(getattr(getattr(teacher, "head", None), "fc", None), "out_features", None)
        if outputs is not None and outputs != self.hparams["num_outputs"]:
            raise UserError(
                f"the teacher predicts {outputs} classes and the student {self.hparams['num_outputs']}; "
                "distil from a run trained on the same labels"
            )
        teacher.requires_grad_(False)
        object.__setattr__(self, "_teacher", teacher.eval().to(self.device))

    def on_fit_start(self) -> None:
        super().on_fit_start()
        if self._teacher is None:
            config, checkpoint = locate_run(*self.teacher_source)
            teacher = rebuild_run(config, checkpoint).model
            self.set_teacher(teacher, getattr(teacher, "tokenizer", None))
            if self.teacher_cache is not None:
                outputs = TeacherOutputs(self.teacher, checkpoint_digest(checkpoint))
                if Path(self.teacher_cache).exists():
                    outputs.load(self.teacher_cache)
                object.__setattr__(self, "_teacher", outputs.eval())

    def on_fit_end(self) -> None:
        super().on_fit_end()
        teacher, path = self._teacher, self.teacher_cache
        if isinstance(teacher, TeacherOutputs) and path is not None and self.trainer.is_global_zero:
            teacher.save(path)

    def train(self, mode: bool = True) -> Distill:
        super().train(mode)
        if self._teacher is not None:
            self._teacher.eval()  # dropout would make the soft targets noisy
        return self

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        if "label" not in batch:
            raise KeyError("train batch has no `label`; distillation here also uses the labels")
        outputs = self(batch)
        with torch.no_grad():
            teacher_outputs = self.teacher(batch)
        loss, soft, hard = distillation_loss(
            outputs, teacher_outputs, batch["label"], self.temperature, self.soft_weight, self.label_weight
        )
        size = batch["label"].shape[0]
        self.log("train/loss", loss, prog_bar=True, batch_size=size)
        self.log_dict({"train/soft_loss": soft, "train/label_loss": hard}, batch_size=size)
        metrics = self.metrics["train_metrics"]
        metrics(self.metric_inputs(outputs.detach()), batch["label"])
        self.log_dict(metrics, batch_size=size, on_step=False, on_epoch=True)
        return loss


def check_same_tokenizer(teacher: Tokenizer, student: Tokenizer) -> None:
    """The teacher reads the student's token ids, so both tokenizers must map text to the same ids. A
    pretrained family's tokenizer (MiniLM's) is compared by the text tokenizer it wraps, so a student on
    that vocabulary file, with its own embedder, may learn from it."""
    teacher, student = getattr(teacher, "inner", teacher), getattr(student, "inner", student)
    moved = ids_moved(teacher, student)  # text tokenizers (a SubwordTokenizer too) compare by vocabulary
    if moved or (moved is None and type(teacher) is not type(student)):
        raise UserError(
            f"the teacher's tokenizer ({type(teacher).__name__}) differs from the student's "
            f"({type(student).__name__}, or another vocabulary); give the student's data the teacher's "
            f"tokenizer settings (e.g. the same vocab_size and data, or the vocabulary file as its path)"
        )
