"""`limit` means one thing: at most that many examples per split, taken before anything expensive."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tabrasa.tokenizers.learned_vocabulary as learned_vocabulary
from tabrasa.data import IMDBDataModule
from tabrasa.data.protein_classification import ProteinClassificationDataModule, ProteinRecord
from tabrasa.tokenizers.learned_vocabulary import SubwordTokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer


class EndlessProteins(ProteinClassificationDataModule):
    """A source as large as UniProt's, counting how many records were read."""

    read = 0

    @property
    def name(self) -> str:
        return "endless"

    def load_records(self) -> Iterator[ProteinRecord]:
        for i in itertools.count():
            EndlessProteins.read += 1
            residues = "MK" + "ACDEFGHIKL"[i % 10] * (1 + i % 7) + "W" * (i % 5)
            yield ProteinRecord(f"p{i}", residues, "ab"[i % 2])


def test_a_protein_source_is_read_only_as_far_as_the_limit_needs(tmp_path: Path) -> None:
    EndlessProteins.read = 0
    data = EndlessProteins(
        tokenizer=ProteinTokenizer(unknown="x"),
        limit=8,
        val_size=2000,
        test_size=10000,
        cache_dir=str(tmp_path),
    )
    sizes = {split: len(rows) for split, rows in data.splits.items()}
    assert EndlessProteins.read <= 3 * 8  # limit per split, not the whole source
    assert all(0 < n <= 8 for n in sizes.values()), sizes


def test_text_vocabulary_is_trained_on_the_limited_split_only(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    train = learned_vocabulary.train_subword_tokenizer

    def counting(texts: list[str], *args: Any) -> Any:
        seen.append(len(texts))
        return train(texts, *args)

    monkeypatch.setattr(learned_vocabulary, "train_subword_tokenizer", counting)
    data = IMDBDataModule(tokenizer=SubwordTokenizer(vocab_size=321, max_length=32), limit=40)
    assert data.tokenizer.vocab_size <= 321  # type: ignore[attr-defined]
    assert seen == [40]
    assert {len(rows) for rows in data.splits.values()} == {40}
