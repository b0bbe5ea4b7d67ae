"""The base every tabrasa data module shares: splits, `limit`, the tokenizer it was given, the loaders.

A concrete data module says where its raw examples come from and how they are labelled:

    load_splits()       train / validation / test Arrow tables with a `label` column, built with `self.limit`
                        applied before any expensive step (`self.take`, `self.pool_size`)
    raw_input(row, split) one row → the raw example its tokenizer encodes (a string, an image, a waveform)
    tokenizer_hint      the tokenizer the error for a missing one suggests (a data module never picks one)

This class owns the rest: the loader settings (`LoaderConfig`), the injected tokenizer in train mode for
the training split only, class names and `num_outputs` (what the CLI links into the model), the
training-fraction subset, the one pass over raw inputs (`screen`) and the DataLoaders.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import datasets
import numpy as np
from torch.utils.data import DataLoader, Dataset

from tabrasa.data.base_module import BaseDataModule
from tabrasa.data.bucketing import LengthBucketBatchSampler
from tabrasa.data.inputs import InputScreen
from tabrasa.data.torch_dataset import ArrowRows, EncodedDataset, already_batched
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Batch, in_mode
from tabrasa.training.resumable_data import ResumableLoader

SPLITS = ("train", "validation", "test")


class TabrasaDataModule(BaseDataModule):
    """tokenizer: raw example → tensors (class_path in YAML); required, a data module never picks one.
    loader: batch size, workers and length bucketing (`--data.loader.batch_size 16`).
    limit: at most this many examples per split, taken before anything expensive (vocabulary training,
    decoding, cache building, generation), so a tiny run is tiny. seed: the data's own seed (hold-out
    splits and the training fraction; batch order follows seed_everything).
    train_fraction: train on a seeded, class-stratified fraction of the training split (learning curves).
    skip_bad_inputs: drop unreadable or unlabelled examples (counted per split) instead of stopping.
    cache_dir: where prepared data is cached (default $TABRASA_CACHE or ~/.cache/tabrasa)."""

    has_test_split = True  # a labelled module holds out a test split; `fit` ends by testing on it

    def __init__(self, train_fraction: float = 1.0, skip_bad_inputs: bool = False, **kwargs: Any) -> None:
        # tokenizer, loader, limit, seed and cache_dir are BaseDataModule's, shared with unlabelled modules.
        super().__init__(**kwargs)
        if not 0.0 < train_fraction <= 1.0:
            raise UserError(f"train_fraction={train_fraction} must be in (0, 1]")
        self.train_fraction = train_fraction
        self.skip_bad_inputs = skip_bad_inputs
        self.screen = InputScreen()
        self._splits: datasets.DatasetDict | None = None

    # What the CLI links into the model (and `tokenizer`, from BaseDataModule) ------------------------
    @property
    def class_names(self) -> Sequence[str]:
        return self.splits["train"].features["label"].names

    @property
    def num_outputs(self) -> int:
        """Number of classes: the head's width."""
        return len(self.class_names)

    # What subclasses provide -------------------------------------------------------------------------
    def load_splits(self) -> datasets.DatasetDict:
        """train / validation / test as Arrow tables with a ClassLabel `label`, limited early (see `take`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement load_splits()")

    def raw_input(self, row: dict[str, Any], split: str) -> Any:
        """One row of `split` → the raw example for `tokenizer.encode` (default: the row itself)."""
        return row

    def lengths(self, split: str) -> Sequence[int] | None:
        """Each example's length in tokens, for `loader.bucket_by_length`; None where unknown."""
        return None

    # `limit`, applied early ----------------------------------------------------------------------------
    def take(self, rows: datasets.Dataset) -> datasets.Dataset:
        """The first `limit` rows (all without a limit)."""
        return rows if self.limit is None else rows.select(range(min(self.limit, len(rows))))

    def pool_size(self, splits: int = 3) -> int | None:
        """How many source records `splits` splits of `limit` examples need (None: all of them)."""
        return None if self.limit is None else splits * self.limit

    # Lightning hooks ---------------------------------------------------------------------------------
    def prepare_data(self) -> None:
        self.load_splits()  # builds caches once, on rank 0

    def setup(self, stage: str | None = None) -> None:
        if self._splits is not None:
            return
        splits = datasets.DatasetDict({k: self.take(v) for k, v in self.load_splits().items()})
        self.screen.settle(self.skip_bad_inputs)  # a module that screened in load_splits has settled already
        if self.train_fraction < 1.0:
            splits["train"] = stratified_fraction(splits["train"], self.train_fraction, self.seed)
        self._splits = splits

    @property
    def splits(self) -> datasets.DatasetDict:
        self.setup()
        assert self._splits is not None
        return self._splits

    def dataset(self, split: str) -> Dataset[Batch]:
        rows = self.splits[split]
        tokenizer = in_mode(self.tokenizer, training=split == "train")
        return EncodedDataset(ArrowRows(rows, partial(self.raw_input, split=split)), len(rows), tokenizer)

    def loader(self, split: str, shuffle: bool = False) -> DataLoader[Batch]:
        config = self.loader_config
        common: dict[str, Any] = {
            "num_workers": config.num_workers,
            "collate_fn": already_batched,
            "persistent_workers": config.num_workers > 0,
        }
        lengths = self.lengths(split) if config.bucket_by_length else None
        if lengths is not None:  # similar lengths together; resumes at epoch boundaries only
            sampler = LengthBucketBatchSampler(lengths, config.batch_size, seed=self.seed, shuffle=shuffle)
            return DataLoader(self.dataset(split), batch_sampler=sampler, **common)
        # Training order: fixed by (seed_everything, epoch), split across DDP ranks, resumable mid-epoch.
        loader_class = ResumableLoader if shuffle else DataLoader
        return loader_class(self.dataset(split), batch_size=config.batch_size, shuffle=shuffle, **common)

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
