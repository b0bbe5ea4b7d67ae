"""A trained subword vocabulary is the same, ids included, however often and in whichever process it is
trained: tokenizers' trainers number word-internal pieces in hash-map order (tabrasa/tokenizers/
trainer_order.py), and a vocabulary retrained on a fresh machine must be the run's vocabulary."""

from __future__ import annotations

import random

import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, normalizers, pre_tokenizers, trainers

from tabrasa.tokenizers.text import SPECIALS, train_subword_tokenizer
from tabrasa.tokenizers.trainer_order import hashed_pieces

TRAININGS = 8


def corpus() -> list[str]:
    """Words of 2-9 letters drawn from 26 letters with a fixed seed: many word-internal pieces, many ties."""
    draw = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(draw.choice(letters) for _ in range(draw.randint(2, 9))) for _ in range(400)]
    return [" ".join(draw.choice(words) for _ in range(12)) for _ in range(300)]


def vocabularies(train: object, texts: list[str]) -> set[tuple[tuple[str, int], ...]]:
    return {tuple(sorted(train(texts).get_vocab().items())) for _ in range(TRAININGS)}  # type: ignore[operator]


@pytest.mark.parametrize("kind", ["wordpiece", "bpe"])
def test_every_training_gives_one_vocabulary_with_one_numbering(kind: str) -> None:
    texts = corpus()
    found = vocabularies(lambda t: train_subword_tokenizer(t, kind=kind, vocab_size=400), texts)  # type: ignore[arg-type]
    assert len(found) == 1, f"{len(found)} different {kind} vocabularies in {TRAININGS} trainings"
    (vocabulary,) = found
    assert [token for token, index in sorted(vocabulary, key=lambda pair: pair[1])][
        : len(SPECIALS)
    ] == SPECIALS


def test_the_library_trainer_alone_numbers_them_differently() -> None:
    """Counter-test: without the pieces listed first the same trainings disagree: the test above can fail.
    Once tokenizers numbers them in one order itself (its pull request #2066), this fails, and
    tabrasa/tokenizers/trainer_order.py can go."""

    def raw(texts: list[str]) -> HFTokenizer:
        tokenizer = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer()
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.train_from_iterator(
            texts, trainers.WordPieceTrainer(vocab_size=400, special_tokens=SPECIALS)
        )
        return tokenizer

    assert len(vocabularies(raw, corpus())) > 1


@pytest.mark.parametrize("kind", ["wordpiece", "bpe"])
def test_the_listed_pieces_are_ordinary_entries_of_the_same_size_of_vocabulary(kind: str) -> None:
    texts = corpus()
    tokenizer = train_subword_tokenizer(texts, kind=kind, vocab_size=400)  # type: ignore[arg-type]
    assert [t.content for t in tokenizer.get_added_tokens_decoder().values()] == SPECIALS
    pieces = hashed_pieces(tokenizer, texts, kind)  # type: ignore[arg-type]
    assert pieces and set(pieces) <= set(tokenizer.get_vocab())
    assert tokenizer.get_vocab_size() == 400
    # A piece typed by a user ("##a", "a</w>") is text, not a special token matched before the model.
    assert tokenizer.encode(pieces[0], add_special_tokens=False).tokens != [pieces[0]]
