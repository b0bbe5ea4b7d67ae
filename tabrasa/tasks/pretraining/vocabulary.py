"""What a token-predicting objective needs from a tokenizer: vocabulary size, the mask and padding ids,
and which ids are special (never masked, never drawn as a random replacement)."""

from __future__ import annotations

from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.protein import ESM_ALPHABET, MASK_ID, PAD_ID, ProteinTokenizer
from tabrasa.tokenizers.text import TextTokenizer
from tabrasa.tokenizers.vocabulary import TokenVocabulary

__all__ = ["TokenVocabulary", "token_vocabulary"]


def token_vocabulary(tokenizer: Tokenizer) -> TokenVocabulary:
    """The vocabulary of a text or protein tokenizer (a PretrainedTokenizer is read through), or of any
    tokenizer that declares its own with `token_vocabulary()` (bytes)."""
    inner = getattr(tokenizer, "inner", tokenizer)
    declared = getattr(inner, "token_vocabulary", None)
    if callable(declared):
        return declared()
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
        f"token prediction needs a tokenizer of token ids with a vocabulary (text, protein, bytes), not "
        f"{type(inner).__name__}; for image patches or audio use MaskedPatchModel"
    )
