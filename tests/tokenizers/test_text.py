"""Text tokenizer: golden ids from a fixed vocabulary, explicit counted truncation, trained vocabularies."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tabrasa.tokenizers.text import TextTokenizer, load_subword_tokenizer, train_subword_tokenizer
from tabrasa.tokenizers.truncation import truncate

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "##s",
    "a",
    "dog",
    ".",
]


@pytest.fixture
def vocab_file(tmp_path: Path) -> Path:
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n")
    return path


def test_golden_ids_from_a_bert_vocab(vocab_file: Path) -> None:
    tok = TextTokenizer(load_subword_tokenizer(vocab_file), max_length=32)
    out = tok("The cats sat on a mat.")
    assert out["input_ids"].tolist() == [2, 5, 6, 10, 7, 8, 11, 9, 13, 3]
    assert int(out["truncated"]) == 0
    assert tok("zebra")["input_ids"].tolist() == [2, 1, 3]  # unknown word → [UNK]
    assert tok.vocab_size == len(VOCAB) and tok.pad_id == 0


def test_tokenizer_json_round_trip(vocab_file: Path, tmp_path: Path) -> None:
    tok = TextTokenizer(load_subword_tokenizer(vocab_file))
    tok.save(tmp_path / "tokenizer.json")
    again = TextTokenizer(load_subword_tokenizer(tmp_path))
    assert again("the dog sat")["input_ids"].tolist() == tok("the dog sat")["input_ids"].tolist()


@pytest.mark.parametrize(
    ("policy", "max_length", "expected"),
    [
        ("head", 5, [2, 5, 6, 10, 3]),
        ("tail", 5, [2, 11, 9, 13, 3]),
        (
            "head_tail",
            8,
            [2, 5, 7, 8, 11, 9, 13, 3],
        ),  # budget 6: a quarter (1) from the head, 5 from the tail
    ],
)
def test_truncation_keeps_special_tokens_and_counts(
    vocab_file: Path, policy: str, max_length: int, expected: list[int]
) -> None:
    tok = TextTokenizer(load_subword_tokenizer(vocab_file), max_length=max_length, truncation=policy)  # type: ignore[arg-type]
    out = tok("The cats sat on a mat.")
    assert out["input_ids"].tolist() == expected
    assert int(out["truncated"]) == 10 - max_length


def test_truncation_error_policy_names_the_fix(vocab_file: Path) -> None:
    tok = TextTokenizer(load_subword_tokenizer(vocab_file), max_length=4, truncation="error")
    with pytest.raises(ValueError, match="more than max_length=4; raise max_length or choose truncation"):
        tok("the cat sat on the mat")


def test_truncate_policy_arithmetic() -> None:
    ids = list(range(10))
    assert truncate(ids, 10, "head", 1, 1, "x") == (ids, 0)
    assert truncate(ids, 6, "head_tail", 1, 1, "x") == ([0, 1, 6, 7, 8, 9], 4)


def test_collate_pads_and_masks(vocab_file: Path) -> None:
    tok = TextTokenizer(load_subword_tokenizer(vocab_file))
    batch = tok.collate(
        [{**tok("the cat"), "label": torch.tensor(1)}, {**tok("the cats sat"), "label": torch.tensor(0)}]
    )
    assert batch["input_ids"].tolist() == [[2, 5, 6, 3, 0, 0], [2, 5, 6, 10, 7, 3]]
    assert batch["attention_mask"].tolist() == [[True] * 4 + [False] * 2, [True] * 6]
    assert batch["label"].tolist() == [1, 0]
    tokens = tok.embedder(16)(batch)
    assert tokens.x.shape == (2, 6, 16) and tokens.mask.dtype == torch.bool


@pytest.mark.parametrize("kind", ["wordpiece", "bpe"])
def test_trained_vocabulary_covers_the_corpus(kind: str) -> None:
    corpus = ["the quick brown fox jumps over the lazy dog"] * 20 + ["a cat sat on the mat"] * 20
    tok = train_subword_tokenizer(corpus, kind=kind, vocab_size=60)  # type: ignore[arg-type]
    encoding = tok.encode("The lazy cat")
    assert encoding.tokens[0] == "[CLS]" and encoding.tokens[-1] == "[SEP]"
    assert tok.token_to_id("[UNK]") not in encoding.ids
    assert tok.decode(encoding.ids) == "the lazy cat"


def test_bad_inputs(vocab_file: Path, tmp_path: Path) -> None:
    tok = TextTokenizer(load_subword_tokenizer(vocab_file))
    with pytest.raises(TypeError, match="takes str"):
        tok.encode(b"bytes")  # type: ignore[arg-type]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"holds neither tokenizer\.json nor vocab\.txt"):
        load_subword_tokenizer(empty)
    emb = tok.embedder(8)
    with pytest.raises(ValueError, match="the tokenizer and the embedder do not match"):
        emb({"input_ids": torch.tensor([[2, 99]])})
