"""What a token-predicting objective needs from a tokenizer: vocabulary size, the mask and padding ids,
and which ids are special (never masked, never drawn as a random replacement)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.protein import ESM_ALPHABET, MASK_ID, PAD_ID, ProteinTokenizer
from tabrasa.tokenizers.text import TextTokenizer


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


def token_vocabulary(tokenizer: Tokenizer) -> TokenVocabulary:
    """The vocabulary of a text or protein tokenizer (a PretrainedTokenizer is read through)."""
    inner = getattr(tokenizer, "inner", tokenizer)
    if isinstance(inner, ProteinTokenizer):
        specials = tuple(i for i, t in enumerate(ESM_ALPHABET) if t.startswith("<"))
        return TokenVocabulary(len(ESM_ALPHABET), MASK_ID, PAD_ID, specials)
    if isinstance(inner, TextTokenizer):
        added = inner.hf.get_added_tokens_decoder()
        specials = tuple(sorted(i for i, token in added.items() if token.special))
        found = [inner.hf.token_to_id(t) for t in ("[MASK]", "<mask>")]
        mask = next((i for i in found if i is not None), None)
        return TokenVocabulary(inner.vocab_size, mask, inner.pad_id, specials)
    raise UserError(
        f"token prediction needs a text or protein tokenizer (token ids with a vocabulary), not "
        f"{type(inner).__name__}; for image patches or audio use MaskedPatchModel"
    )
