"""Token labels for heatmaps: one string per encoder token, byte patches included."""

from __future__ import annotations

from tabrasa.inspect.labels import token_labels
from tabrasa.tokenizers.bytes import ByteTokenizer


def test_byte_tokens_are_named_one_byte_each() -> None:
    tokenizer = ByteTokenizer(max_length=16)
    batch = tokenizer.collate([tokenizer("ab"), tokenizer("abcd")])
    assert token_labels(tokenizer, batch, registers=1) == [
        ["[reg0]", "<cls>", "a", "b", "<eos>", "<pad>", "<pad>"],
        ["[reg0]", "<cls>", "a", "b", "c", "d", "<eos>"],
    ]


def test_a_byte_patch_token_is_named_by_its_bytes_without_the_padding() -> None:
    tokenizer = ByteTokenizer(max_length=16, patch_size=4)
    batch = tokenizer.collate([tokenizer("ab"), tokenizer("abcdefg")])  # 4 and 9 bytes with the specials
    assert token_labels(tokenizer, batch) == [
        ["<cls>ab<eos>", "<pad>", "<pad>"],
        ["<cls>abc", "defg", "<eos>"],
    ]
