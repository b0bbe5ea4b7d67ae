"""The byte tokenizer: fixed ids for ASCII and multi-byte UTF-8, explicit truncation, a matching embedder."""

from __future__ import annotations

import pytest
import torch

from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.bytes import CLS_ID, EOS_ID, PAD_ID, VOCAB_SIZE, ByteTokenizer


def test_ascii_ids_are_the_bytes_between_cls_and_eos() -> None:
    assert ByteTokenizer()("Hi!")["input_ids"].tolist() == [257, 72, 105, 33, 258]
    assert (CLS_ID, EOS_ID, PAD_ID, VOCAB_SIZE) == (257, 258, 256, 260)


def test_multi_byte_utf8_is_one_token_per_byte() -> None:
    tok = ByteTokenizer()
    assert tok("é")["input_ids"].tolist() == [257, 0xC3, 0xA9, 258]
    assert tok("苹果")["input_ids"].tolist() == [257, 0xE8, 0x8B, 0xB9, 0xE6, 0x9E, 0x9C, 258]
    assert tok.decode(tok("苹果 é")["input_ids"].tolist()) == "苹果 é"


@pytest.mark.parametrize(
    ("policy", "kept"),
    [("head", b"abcdef"), ("tail", b"uvwxyz"), ("head_tail", b"a" + b"vwxyz")],
)
def test_truncation_keeps_the_specials_and_counts_the_cut(policy: str, kept: bytes) -> None:
    tok = ByteTokenizer(max_length=8, truncation=policy)  # type: ignore[arg-type]
    out = tok("abcdefghijklmnopqrstuvwxyz")
    assert out["input_ids"].tolist() == [CLS_ID, *kept, EOS_ID]
    assert int(out["truncated"]) == 26 - 6


def test_error_policy_and_bad_inputs_name_the_fix() -> None:
    with pytest.raises(ValueError, match="more than max_length=4; raise max_length"):
        ByteTokenizer(max_length=4, truncation="error")("abcd")
    with pytest.raises(TypeError, match="ByteTokenizer takes str; decode it first"):
        ByteTokenizer()(b"raw")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="truncation='middle' is not known"):
        ByteTokenizer(truncation="middle")  # type: ignore[arg-type]


def test_batch_pads_with_pad_and_feeds_its_embedder() -> None:
    tok = ByteTokenizer()
    assert isinstance(tok, Tokenizer)
    batch = tok.encode_batch(["ab", {"text": "abcd", "label": 1}, "é"])
    assert batch["input_ids"].tolist()[0] == [257, 97, 98, 258, PAD_ID, PAD_ID]
    assert batch["attention_mask"].sum(1).tolist() == [4, 6, 4]
    tokens = tok.embedder(32)(batch)
    assert tokens.x.shape == (3, 6, 32) and torch.equal(tokens.mask, batch["attention_mask"])
