"""Protein tokenizer: golden ESM-2 ids, checked against fair-esm and transformers' EsmTokenizer."""

from __future__ import annotations

from pathlib import Path

import esm
import pytest
import torch
from transformers import EsmTokenizer

from tabrasa.tokenizers.protein import ESM_ALPHABET, PAD_ID, ProteinEmbedder, ProteinTokenizer

SEQUENCES = ["MKTAYIAK", "LAGVSERTIDPKQNFYMHWC", "XBUZO", "MK-T.A", "A"]


def ids(sequence: str, **kwargs: object) -> list[int]:
    return ProteinTokenizer(**kwargs)(sequence)["input_ids"].tolist()  # type: ignore[arg-type]


def test_golden_ids() -> None:
    assert ids("MKTAYIAK") == [0, 20, 15, 11, 5, 19, 12, 5, 15, 2]


def test_alphabet_and_ids_match_fair_esm() -> None:
    alphabet = esm.data.Alphabet.from_architecture("ESM-1b")
    assert alphabet.all_toks == ESM_ALPHABET and alphabet.padding_idx == PAD_ID
    _, _, tokens = alphabet.get_batch_converter()([(str(i), s) for i, s in enumerate(SEQUENCES)])
    batch = ProteinTokenizer().collate([ProteinTokenizer()(s) for s in SEQUENCES])
    assert torch.equal(batch["input_ids"], tokens)  # fair-esm pads with <pad> = 1 too


def test_ids_match_transformers_esm_tokenizer(tmp_path: Path) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(esm.data.Alphabet.from_architecture("ESM-1b").all_toks))
    reference = EsmTokenizer(str(vocab))
    for sequence in SEQUENCES:
        assert ids(sequence) == reference(sequence)["input_ids"]


def test_cleaning_lower_case_whitespace_and_stop() -> None:
    expected = ids("MKTAYIAK")
    assert ids("mktayiak") == expected
    assert ids("MKTA\nYIAK *") == expected  # FASTA line break, trailing stop codon
    with pytest.raises(ValueError, match=r"'\*' at residue 3"):
        ids("MK*TA")  # an inner stop is an unknown letter


@pytest.mark.parametrize(("policy", "expected"), [("unk", 3), ("x", 24)])
def test_unknown_letter_policies(policy: str, expected: int) -> None:
    assert ids("MJK", unknown=policy) == [0, 20, expected, 15, 2]


def test_unknown_letters_follow_the_references(tmp_path: Path) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(ESM_ALPHABET))
    assert ids("MJK", unknown="unk") == EsmTokenizer(str(vocab))("MJK")["input_ids"]
    with pytest.raises(KeyError):  # fair-esm refuses them, as the default policy does (with a message)
        esm.data.Alphabet.from_architecture("ESM-1b").get_batch_converter()([("p", "MJK")])


def test_unknown_letter_error_names_sequence_position_letter_and_options() -> None:
    tok = ProteinTokenizer()
    with pytest.raises(ValueError, match=r"protein P12345 has 'J' at residue 3 .* 'unk' .* 'x'"):
        tok({"id": "P12345", "sequence": "MKJ"})
    with pytest.raises(ValueError, match="unknown='bad' is not known"):
        ProteinTokenizer(unknown="bad")  # type: ignore[arg-type]


def test_empty_and_non_string_inputs() -> None:
    tok = ProteinTokenizer()
    for empty in ("", "  \n", "*"):
        with pytest.raises(ValueError, match="is empty"):
            tok(empty)
    with pytest.raises(TypeError, match="is list; ProteinTokenizer takes str"):
        tok(["M", "K"])  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="under sequence"):
        tok({"seq": "MK"})


def test_truncation_is_explicit_and_counted() -> None:
    head = ProteinTokenizer(max_length=6)("MKTAYIAK")
    assert head["input_ids"].tolist() == [0, 20, 15, 11, 5, 2] and int(head["truncated"]) == 4
    tail = ProteinTokenizer(max_length=6, truncation="tail")("MKTAYIAK")
    assert tail["input_ids"].tolist() == [0, 19, 12, 5, 15, 2]
    assert int(ProteinTokenizer()("MKTAYIAK")["truncated"]) == 0
    with pytest.raises(ValueError, match="10 tokens, more than max_length=6"):
        ProteinTokenizer(max_length=6, truncation="error")("MKTAYIAK")
    with pytest.raises(ValueError, match="truncation='cut' is not known"):
        ProteinTokenizer(truncation="cut")  # type: ignore[arg-type]


def test_collate_and_embedder() -> None:
    torch.manual_seed(0)
    tok = ProteinTokenizer()
    batch = tok.collate([tok({"sequence": "MKTAYIAK", "label": 1}), tok({"sequence": "MK", "label": 0})])
    assert batch["input_ids"][1].tolist() == [0, 20, 15, 2] + [PAD_ID] * 6
    assert batch["attention_mask"].sum(1).tolist() == [10, 4] and batch["label"].tolist() == [1, 0]
    emb = tok.embedder(32)
    assert isinstance(emb, ProteinEmbedder) and emb.token_embed.weight.shape == (33, 32)
    assert emb.token_embed.padding_idx == PAD_ID
    out = emb(batch)
    assert out.x.shape == (2, 10, 32) and out.grid is None  # the structure is the sequence order
    assert torch.equal(out.mask, batch["attention_mask"])
