"""The pieces that Hugging Face's subword trainers number in hash-map order, listed before training.

`tokenizers`' BPE and WordPiece trainers create the word-internal pieces (WordPiece's `##x`, BPE's `x</w>`)
while they iterate over a hash map of word counts, whose order changes from process to process; merges
tied on count are then broken by those ids (huggingface/tokenizers#1794, #2066). Twelve trainings of 8,000
entries on 2,000 IMDB reviews gave 12 numberings, and for WordPiece 6 different vocabularies
(results/tokenizers/vocabulary_order.json), so a run that retrained its vocabulary on a fresh machine was
not the run.
Handing these pieces to the trainer in sorted order, as special tokens, numbers them first and in one
order; `without_extra_specials` then makes them ordinary entries of the vocabulary again. The pieces are
the ones the trainer would make itself, so the vocabulary's size and what it can encode do not change.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

from tokenizers import Tokenizer as HFTokenizer

CONTINUING_PREFIX = "##"  # WordPiece's word-internal prefix (the trainer's default)
END_OF_WORD = "</w>"  # the BPE end-of-word suffix train_subword_tokenizer sets


def hashed_pieces(
    tokenizer: HFTokenizer, texts: Iterable[str], kind: Literal["wordpiece", "bpe"]
) -> list[str]:
    """Sorted: every piece the trainer would create lazily for `texts`, after the tokenizer's normalizer and
    pre-tokenizer (the trainer's own view of the words)."""
    normalizer, pre_tokenizer = tokenizer.normalizer, tokenizer.pre_tokenizer
    found: set[str] = set()
    for text in texts:
        normalized = normalizer.normalize_str(text) if normalizer is not None else text
        words = (
            pre_tokenizer.pre_tokenize_str(normalized) if pre_tokenizer is not None else [(normalized, None)]
        )
        for word, _ in words:
            if kind == "wordpiece":
                found.update(CONTINUING_PREFIX + char for char in word[1:])
            elif word:
                found.add(word[-1] + END_OF_WORD)
    return sorted(found)


def without_extra_specials(tokenizer: HFTokenizer, specials: list[str]) -> HFTokenizer:
    """`tokenizer` with only `specials` left as special tokens: the pieces handed to the trainer stay in the
    vocabulary at the ids they got, as ordinary entries (matched inside words, not in raw text)."""
    state = json.loads(tokenizer.to_str())
    state["added_tokens"] = [token for token in state["added_tokens"] if token["content"] in specials]
    return HFTokenizer.from_str(json.dumps(state))
