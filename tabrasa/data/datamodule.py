"""The base every tabrasa data module shares: three Arrow splits, a tokenizer, and the loaders.

Subclasses say where raw examples come from and how a row becomes an example; this class owns the
splitting, the DataLoaders and what the CLI links into the model (`tokenizer`, `num_outputs`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from functools import partial
from typing import Any

import datasets
import numpy as np
import pytorch_lightning as pl
from torch.utils.data import DataLoader, Dataset

from tabrasa.data.torch_dataset import RowDataset
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.training.resumable_data import ResumableLoader

SPLITS = ("train", "validation", "test")


class TabrasaDataModule(pl.LightningDataModule):
    """batch_size: examples per step and device. num_workers: loader processes (0 = main process).
    limit: keep only the first `limit` examples of each split (smoke tests, quick looks).
    train_fraction: train on a seeded, class-stratified fraction of the training split (learning curves);
    validation and test stay whole."""

    def __init__(
        self,
        batch_size: int = 32,
        num_workers: int = 0,
        limit: int | None = None,
        seed: int = 0,
        train_fraction: float = 1.0,
    ) -> None:
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        if limit is not None and limit < 1:
            raise ValueError(f"limit={limit} must be >= 1 or None")
        if not 0.0 < train_fraction <= 1.0:
            raise ValueError(f"train_fraction={train_fraction} must be in (0, 1]")
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.limit = limit
        self.seed = seed
        self.train_fraction = train_fraction
        self._splits: datasets.DatasetDict | None = None

    # What the CLI links into the model ---------------------------------------------------------------
    @property
    @abstractmethod
    def tokenizer(self) -> Tokenizer:
        """The preprocessing half; the model builds the matching embedder from it."""

    @property
    @abstractmethod
    def num_outputs(self) -> int:
        """Number of classes (classification) or regression targets."""

    @property
    def class_names(self) -> Sequence[str] | None:
        return None

    # What subclasses provide -------------------------------------------------------------------------
    @abstractmethod
    def load_splits(self) -> datasets.DatasetDict:
        """Build (or read from cache) the train / validation / test splits as Arrow datasets."""

    @abstractmethod
    def to_example(self, row: dict[str, Any], split: str) -> Batch:
        """One Arrow row → tensors for the collate function."""

    # Lightning hooks ---------------------------------------------------------------------------------
    def prepare_data(self) -> None:
        self.load_splits()  # builds caches once, on rank 0

    def setup(self, stage: str | None = None) -> None:
        if self._splits is None:
            splits = self.load_splits()
            if self.limit is not None:
                splits = datasets.DatasetDict(
                    {k: v.select(range(min(self.limit, len(v)))) for k, v in splits.items()}
                )
            if self.train_fraction < 1.0:
                splits["train"] = stratified_fraction(splits["train"], self.train_fraction, self.seed)
            self._splits = splits

    @property
    def splits(self) -> datasets.DatasetDict:
        self.setup()
        assert self._splits is not None
        return self._splits

    def dataset(self, split: str) -> Dataset[Batch]:
        return RowDataset(self.splits[split], partial(self.to_example, split=split))

    def loader(self, split: str, shuffle: bool = False) -> DataLoader[Batch]:
        # Training order: fixed by (seed, epoch), split across DDP ranks, resumable mid-epoch.
        loader_class = ResumableLoader if shuffle else DataLoader
        return loader_class(
            self.dataset(split),
            batch_size=self.batch_size,
            shuffle=shuffle,
            num_workers=self.num_workers,
            collate_fn=self.tokenizer.collate,
            persistent_workers=self.num_workers > 0,
            drop_last=False,
        )

    def train_dataloader(self) -> DataLoader[Batch]:
        return self.loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader[Batch]:
        return self.loader("validation")

    def test_dataloader(self) -> DataLoader[Batch]:
        return self.loader("test")

    def predict_dataloader(self) -> DataLoader[Batch]:
        return self.loader("test")


def stratified_fraction(rows: datasets.Dataset, fraction: float, seed: int) -> datasets.Dataset:
    """A seeded subset with each class at `fraction` of its count (at least one example per class), so
    small fractions keep the class balance of the full split. Regression targets are sampled plainly."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(rows["label"])
    if labels.dtype.kind not in "iu":
        keep = rng.permutation(len(rows))[: max(1, round(fraction * len(rows)))]
        return rows.select(np.sort(keep))
    chosen = []
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        chosen.append(rng.permutation(members)[: max(1, round(fraction * len(members)))])
    return rows.select(np.sort(np.concatenate(chosen)))
