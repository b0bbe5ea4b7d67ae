"""Image classification data: Arrow rows (`image`, `label`) → the image tokenizer, augmented in training only.

Subclasses provide the splits; `image` may be anything the ImageTokenizer reads (a numpy array, as the
Arrow `Array2D`/`Array3D` columns give, or a PIL image, as the `datasets.Image` feature decodes to).
Augmentation (torchvision transforms v2) is the tokenizer's, switched on for the training split here.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import datasets
import torch
from torch.utils.data import Dataset

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.image_tensors import ImageTensorDataset, decode_images
from tabrasa.data.splits import Size
from tabrasa.tokenizers.base import Batch
from tabrasa.tokenizers.image import ImageTokenizer


class ImageClassificationDataModule(TabrasaDataModule):
    """tokenizer: patch size, resizing, normalisation and the training augmentation; None gives the
    dataset's `default_tokenizer()`. val_size: rows (or a fraction) held out from train, stratified.
    in_memory: decode every image once into a uint8 tensor and tokenise whole batches (small images of
    one size, e.g. Fashion-MNIST: several times the throughput); False decodes row by row in workers."""

    def __init__(
        self,
        tokenizer: ImageTokenizer | None = None,
        val_size: Size = 0.1,
        cache_dir: str | None = None,
        batch_size: int = 64,
        num_workers: int = 0,
        limit: int | None = None,
        seed: int = 0,
        train_fraction: float = 1.0,
        in_memory: bool = False,
    ) -> None:
        super().__init__(
            batch_size=batch_size,
            num_workers=num_workers,
            limit=limit,
            seed=seed,
            train_fraction=train_fraction,
        )
        self._tokenizer = tokenizer or self.default_tokenizer()
        self.val_size = val_size
        self.cache_dir = cache_dir
        self.in_memory = in_memory
        self._decoded: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def default_tokenizer(self) -> ImageTokenizer:
        return ImageTokenizer(patch_size=16, channels=3, image_size=224)

    @property
    def tokenizer(self) -> ImageTokenizer:
        return self._tokenizer

    @property
    def class_names(self) -> Sequence[str]:
        return self.splits["train"].features["label"].names

    @property
    def num_outputs(self) -> int:
        return len(self.class_names)

    @abstractmethod
    def load_splits(self) -> datasets.DatasetDict:
        """train / validation / test with an `image` column and a ClassLabel `label` column."""

    def dataset(self, split: str) -> Dataset[Batch]:
        if not self.in_memory:
            return super().dataset(split)
        if split not in self._decoded:
            self._decoded[split] = decode_images(self.splits[split], f"{type(self).__name__} {split}")
        images, labels = self._decoded[split]
        return ImageTensorDataset(images, labels, self.tokenizer, train=split == "train")

    def to_example(self, row: dict[str, Any], split: str) -> Batch:
        return self.tokenizer({"image": row["image"], "label": row["label"]}, train=split == "train")
