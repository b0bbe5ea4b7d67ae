"""Inputs without labels, for pretraining: a tokenizer, train and validation splits, the loaders.

A source says where its raw examples come from (`load_inputs`: anything with `len` and `take(indices)`);
this class holds out a seeded validation set, applies `limit` and builds the loaders, which hand the
tokenizer's Batch to a pretraining task. `num_outputs` is 0: the CLI links it into every model, and
pretraining heads size themselves from the tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from tabrasa.data.base_module import BaseDataModule
from tabrasa.data.torch_dataset import EncodedDataset, already_batched
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Batch, in_mode
from tabrasa.training.resumable_data import ResumableLoader


class Inputs(Protocol):
    """Raw examples by index: `take` returns what `tokenizer.encode_batch` reads (a list, or a tensor)."""

    def __len__(self) -> int: ...

    def take(self, indices: Sequence[int]) -> Any: ...


class ListInputs:
    def __init__(self, items: Sequence[Any]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def take(self, indices: Sequence[int]) -> list[Any]:
        return [self.items[i] for i in indices]


class TensorInputs:
    """Rows of one tensor (e.g. uint8 images (N, C, H, W)), taken as one tensor for a batched tokenizer."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor

    def __len__(self) -> int:
        return len(self.tensor)

    def take(self, indices: Sequence[int]) -> torch.Tensor:
        return self.tensor[torch.as_tensor(list(indices), dtype=torch.long)]


class UnlabelledDataModule(BaseDataModule):
    """tokenizer: raw example → tensors (class_path in YAML); required, a data module never picks one.
    loader: as for labelled data. limit: at most this many training inputs (and validation inputs), taken
    before anything expensive where the source allows. val_size: inputs held out (seeded) to report the
    pretraining loss on. seed, cache_dir: as for labelled data."""

    def __init__(self, val_size: int = 1000, **kwargs: Any) -> None:
        # tokenizer, loader, limit, seed and cache_dir are BaseDataModule's, shared with labelled modules.
        super().__init__(**kwargs)
        if val_size < 1:
            raise UserError(f"val_size={val_size} must be >= 1")
        self.val_size = val_size
        self._split: dict[str, np.ndarray] | None = None
        self._inputs: Inputs | None = None

    num_outputs = 0
    class_names = None
    # Pretraining inputs have no test split: `fit` skips its final test (TabrasaCLI.after_fit).
    has_test_split = False

    def load_inputs(self) -> Inputs:
        raise NotImplementedError(f"{type(self).__name__} must implement load_inputs()")

    @property
    def inputs(self) -> Inputs:
        if self._inputs is None:
            self._inputs = self.load_inputs()
        return self._inputs

    def setup(self, stage: str | None = None) -> None:
        if self._split is not None:
            return
        total = len(self.inputs)
        val = min(self.val_size, total // 10 or 1, self.limit or total)
        order = np.random.default_rng(self.seed).permutation(total)
        train = np.sort(order[val:])[: self.limit]
        if len(train) == 0:
            raise UserError(f"{type(self).__name__} has {total} inputs: none left to train on")
        self._split = {"train": train, "validation": np.sort(order[:val])}

    def split_indices(self, split: str) -> np.ndarray:
        self.setup()
        assert self._split is not None
        return self._split[split]

    def dataset(self, split: str) -> Dataset[Batch]:
        rows = self.split_indices(split)
        inputs = self.inputs

        def fetch(indices: list[int]) -> tuple[Any, None]:
            return inputs.take([int(rows[i]) for i in indices]), None

        return EncodedDataset(fetch, len(rows), in_mode(self.tokenizer, training=split == "train"))

    def loader(self, split: str, shuffle: bool) -> DataLoader[Batch]:
        config = self.loader_config
        loader_class = ResumableLoader if shuffle else DataLoader
        return loader_class(
            self.dataset(split),
            batch_size=config.batch_size,
            shuffle=shuffle,
            num_workers=config.num_workers,
            collate_fn=already_batched,
            persistent_workers=config.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader[Batch]:
        return self.loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader[Batch]:
        return self.loader("validation", shuffle=False)
