"""Every Fashion-MNIST *training* image, without labels (60,000, 28×28 grey). The test file is read only to
leave out training images that are byte-identical to a test image, so no test example is pretrained on."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch

from tabrasa.data.fashion_mnist import FILES, fashion_mnist_dir, read_idx
from tabrasa.data.unlabelled.base import TensorInputs, UnlabelledDataModule


def image_hashes(images: np.ndarray) -> list[bytes]:
    return [hashlib.blake2b(image.tobytes(), digest_size=16).digest() for image in images]


class UnlabelledFashionMNIST(UnlabelledDataModule):
    """download: as FashionMNISTDataModule (torchvision's downloader where the Debian files are absent)."""

    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.ImageTokenizer, "
        "init_args: {patch_size: 7, channels: 1, image_size: 28, mean: 0.286, std: 0.353}}"
    )

    def __init__(self, download: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.download = download

    def load_inputs(self) -> TensorInputs:
        source = fashion_mnist_dir(self.cache_dir, self.download)
        train = read_idx(source / FILES["train"][0])  # (60000, 28, 28) uint8
        test = set(image_hashes(read_idx(source / FILES["test"][0])))
        keep = [i for i, h in enumerate(image_hashes(train)) if h not in test]
        return TensorInputs(torch.from_numpy(np.ascontiguousarray(train[keep]))[:, None])  # (N, 1, 28, 28)
