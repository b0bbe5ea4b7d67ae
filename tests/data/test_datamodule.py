"""The shared data-module machinery: stratified training fractions and the IMDB splits."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import pytest

from tabrasa.data import IMDBDataModule
from tabrasa.data.datamodule import stratified_fraction
from tabrasa.data.loader import LoaderConfig


def test_stratified_fraction_keeps_class_balance_and_is_seeded() -> None:
    rows = datasets.Dataset.from_dict({"label": [0] * 90 + [1] * 10, "x": list(range(100))})
    part = stratified_fraction(rows, 0.1, seed=3)
    assert sorted(np.bincount(part["label"]).tolist()) == [1, 9]
    assert part["x"] == stratified_fraction(rows, 0.1, seed=3)["x"]
    assert part["x"] != stratified_fraction(rows, 0.1, seed=4)["x"]
    assert len(stratified_fraction(rows, 0.001, seed=0)) == 2  # at least one per class


def test_imdb_splits_are_limited_and_fractioned(cache_dir: Path) -> None:
    dm = IMDBDataModule(limit=200, vocab_size=500, max_length=64, train_fraction=0.5)
    dm.setup()
    assert len(dm.splits["train"]) == 100 and len(dm.splits["validation"]) == 200
    assert dm.num_outputs == 2 and dm.tokenizer.vocab_size <= 500
    batch = next(iter(dm.train_dataloader()))
    assert batch["input_ids"].shape[1] <= 64 and batch["label"].dtype.is_floating_point is False


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="train_fraction=0"):
        IMDBDataModule(train_fraction=0.0)
    with pytest.raises(ValueError, match="batch_size=0"):
        LoaderConfig(batch_size=0)
    with pytest.raises(ValueError, match="limit=0"):
        IMDBDataModule(limit=0)
