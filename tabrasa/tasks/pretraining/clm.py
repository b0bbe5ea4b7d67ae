"""Causal language modelling for text (GPT, Radford et al. 2018): every real token predicts the next one,
through a backbone built with `causal: true`. Perplexity is exp of the mean next-token loss per predicted
token over the epoch. The head is the same tied token head as masked-token prediction."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining.base import PretrainingTask, StepOutput, mean_over
from tabrasa.tasks.pretraining.heads import TokenPredictionHead
from tabrasa.tasks.pretraining.mlm import token_table
from tabrasa.tasks.pretraining.vocabulary import token_vocabulary
from tabrasa.tokenizers.base import Batch


class CausalLanguageModel(PretrainingTask):
    """tie_weights: the output projection is the input embedding table (GPT-2 ties them too)."""

    logged = ("acc", "ppl")

    def __init__(self, *args: Any, tie_weights: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not getattr(getattr(self.backbone, "config", None), "causal", False):
            raise UserError(
                "causal language modelling needs a causal backbone, or every token sees the one it predicts; "
                "set model.init_args.backbone.init_args.config.causal: true"
            )
        token_vocabulary(self.tokenizer)  # a text or protein tokenizer, or a clear error
        table = token_table(self.embedder)
        eps = getattr(self.backbone.config, "norm_eps", 1e-5)
        self.head = TokenPredictionHead(self.backbone.dim, table.shape[0], eps, tied=tie_weights)

    def step(self, batch: Batch) -> StepOutput:
        ids = batch["input_ids"]
        real = batch.get("attention_mask")
        real = torch.ones_like(ids, dtype=torch.bool) if real is None else real.bool()
        hidden = self.encode(self.embedder(batch))  # (B, N, D)
        scored = real[:, :-1] & real[:, 1:]  # (B, N-1): a real token followed by a real token
        logits = self.head(hidden[:, :-1][scored], token_table(self.embedder)).float()  # (M, V)
        target = ids[:, 1:][scored]
        loss_sum = F.cross_entropy(logits, target, reduction="sum")
        count = scored.sum()
        correct = (logits.argmax(-1) == target).sum()
        return StepOutput(mean_over(loss_sum, count), loss_sum, correct, count)
