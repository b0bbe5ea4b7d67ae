"""What a token-predicting objective (masked or causal language modelling) needs from a tokenizer: the
vocabulary size, the mask and padding ids, and which ids are special (never masked, never drawn as a
random replacement). A tokenizer of fixed ids (bytes) declares it with a `token_vocabulary()` method."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TokenVocabulary:
    size: int
    mask_id: int | None
    pad_id: int
    special_ids: tuple[int, ...]

    def ordinary(self) -> torch.Tensor:
        """Ids a random replacement may take (BERT's 10% random tokens): every non-special id."""
        special = set(self.special_ids)
        return torch.tensor([i for i in range(self.size) if i not in special])
