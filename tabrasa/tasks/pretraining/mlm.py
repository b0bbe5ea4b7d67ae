"""Masked-token prediction for text and proteins (BERT, Devlin et al. 2019; ESM, Rives et al. 2021).

15% of the real, non-special tokens of each sequence are chosen; of those 80% become the mask token, 10% a
random ordinary token and 10% stay unchanged, so the encoder cannot learn that only [MASK] positions
matter. The loss is cross-entropy on the chosen positions only; accuracy and perplexity are over them.
The output projection is tied to the input embedding by default (`tie_weights`).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining.base import PretrainingTask, StepOutput, mean_over
from tabrasa.tasks.pretraining.heads import TokenPredictionHead
from tabrasa.tasks.pretraining.masking import check_ratio, random_mask
from tabrasa.tasks.pretraining.vocabulary import token_vocabulary
from tabrasa.tokenizers.base import Batch


class MaskedTokenModel(PretrainingTask):
    """mask_ratio: share of maskable tokens chosen per sequence (0.15). replace: (mask, random) shares of
    the chosen (0.8, 0.1; the rest stay unchanged). tie_weights: decoder = input embedding table."""

    logged = ("acc", "ppl")

    def __init__(
        self,
        *args: Any,
        mask_ratio: float = 0.15,
        replace: tuple[float, float] = (0.8, 0.1),
        tie_weights: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.mask_ratio = check_ratio(mask_ratio, "mask_ratio")
        if min(replace) < 0 or sum(replace) > 1:
            raise UserError(
                f"replace={replace} must be two shares >= 0 summing to at most 1, e.g. [0.8, 0.1]"
            )
        self.replace = (float(replace[0]), float(replace[1]))
        self.vocab = token_vocabulary(self.tokenizer)
        if self.vocab.mask_id is None:
            raise UserError("the text tokenizer has no [MASK] or <mask> token; add one to its vocabulary")
        self.register_buffer("ordinary_ids", self.vocab.ordinary(), persistent=False)
        self.register_buffer("special_ids", torch.tensor(self.vocab.special_ids), persistent=False)
        table = token_table(self.embedder)
        eps = getattr(getattr(self.backbone, "config", None), "norm_eps", 1e-5)
        self.head = TokenPredictionHead(self.backbone.dim, table.shape[0], eps, tied=tie_weights)

    def logits(self, batch: Batch) -> torch.Tensor:
        """Vocabulary logits at every position of an unmasked batch (B, N, V)."""
        tokens = self.embedder(batch)
        return self.head(self.encode(tokens), token_table(self.embedder))

    def corrupt(self, batch: Batch) -> tuple[Batch, torch.Tensor]:
        """The batch with chosen tokens replaced (80/10/10), and the chosen positions (B, N) bool."""
        ids = batch["input_ids"]
        real = batch.get("attention_mask")
        real = torch.ones_like(ids, dtype=torch.bool) if real is None else real.bool()
        chosen = random_mask(real & ~torch.isin(ids, self.special_ids), self.mask_ratio)
        draw = torch.rand(ids.shape, device=ids.device)
        to_mask = chosen & (draw < self.replace[0])
        to_random = chosen & (draw >= self.replace[0]) & (draw < sum(self.replace))
        random_ids = self.ordinary_ids[torch.randint(len(self.ordinary_ids), ids.shape, device=ids.device)]
        corrupted = torch.where(to_mask, self.vocab.mask_id, torch.where(to_random, random_ids, ids))
        return {**batch, "input_ids": corrupted}, chosen

    def step(self, batch: Batch) -> StepOutput:
        corrupted, chosen = self.corrupt(batch)
        hidden = self.encode(self.embedder(corrupted))  # (B, N, D)
        logits = self.head(hidden[chosen], token_table(self.embedder)).float()  # (M, V): chosen only
        target = batch["input_ids"][chosen]
        loss_sum = F.cross_entropy(logits, target, reduction="sum")  # 0 for M = 0, never NaN
        count = chosen.sum()
        correct = (logits.argmax(-1) == target).sum()
        return StepOutput(mean_over(loss_sum, count), loss_sum, correct, count)


def token_table(embedder: torch.nn.Module) -> torch.Tensor:
    """The embedder's (V, D) token table: what a tied head decodes with."""
    table = getattr(embedder, "token_embed", None)
    if not isinstance(table, torch.nn.Embedding):
        raise UserError(
            f"token prediction needs an embedder with a token table (token_embed), not "
            f"{type(embedder).__name__}; use a text or protein tokenizer"
        )
    return table.weight
