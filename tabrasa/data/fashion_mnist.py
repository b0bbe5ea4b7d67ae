"""Fashion-MNIST (Xiao et al. 2017): 70,000 28×28 grey images of 10 kinds of clothing, 7,000 per class.

Read from the Debian package `dataset-fashion-mnist` (the original gzipped IDX files); where those are
absent and the network is there, torchvision's downloader fetches the same files. The official 60k/10k
train/test split is kept; validation is a seeded, stratified hold-out from train. Images are stored as
PNG in the Arrow cache (`datasets.Image`, as the Hugging Face hub copy does), decoded per row in workers.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import PIL.Image
from pytorch_lightning.utilities import rank_zero_info
from tqdm.auto import tqdm

from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.image_classification import ImageClassificationDataModule
from tabrasa.data.sources import DataSourceMissingError
from tabrasa.data.splits import holdout
from tabrasa.io import atomic_write

DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
CLASS_NAMES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)  # fmt: skip
FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (LeCun's MNIST format; gzipped or not) → numpy array of its shape and type.

    Header: two zero bytes, a type code, the number of dimensions, then one big-endian uint32 per dimension.
    """
    data = (gzip.open if path.suffix == ".gz" else open)(path, "rb").read()
    if len(data) < 4 or data[:2] != b"\0\0" or data[2] not in IDX_DTYPES:
        raise ValueError(f"{path} is not an IDX file (starts with {data[:4].hex()})")
    ndim = data[3]
    shape = tuple(int(d) for d in np.frombuffer(data, ">u4", count=ndim, offset=4))
    values = np.frombuffer(data, IDX_DTYPES[data[2]], offset=4 + 4 * ndim)
    if values.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header says shape {shape} but holds {values.size} values; file truncated?")
    return values.reshape(shape)


def fashion_mnist_dir(cache_dir: str | None, download: bool) -> Path:
    """The folder with the four .gz files: the Debian package's, else torchvision's download in the cache."""
    if all((DEBIAN_DIR / f).exists() for pair in FILES.values() for f in pair):
        return DEBIAN_DIR
    root = cache_root(cache_dir) / "torchvision"
    raw = root / "FashionMNIST" / "raw"
    if not all((raw / f).exists() for pair in FILES.values() for f in pair) and download:
        from torchvision.datasets import FashionMNIST

        try:
            for train in (True, False):
                FashionMNIST(str(root), train=train, download=True)
        except Exception as error:  # no network: every urllib/socket error
            rank_zero_info(f"[fashion_mnist] torchvision download failed: {error}")
    if all((raw / f).exists() for pair in FILES.values() for f in pair):
        return raw
    raise DataSourceMissingError(
        f"Fashion-MNIST was not found in {DEBIAN_DIR} (nor downloaded to {raw}). To install it: "
        f"apt-get install dataset-fashion-mnist"
    )


class FashionMNISTDataModule(ImageClassificationDataModule):
    """Official 60,000 / 10,000 train / test; val_size held out of train. download: use torchvision's
    downloader when the Debian files are absent (needs the network). in_memory (default here): all 70,000
    images decoded once (55 MB) and tokenised a batch at a time."""

    # Fashion-MNIST's pixel statistics; 7×7 patches give a 4×4 grid (ViT's 16×16 patches on 224² → 14×14).
    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.ImageTokenizer, "
        "init_args: {patch_size: 7, channels: 1, mean: 0.286, std: 0.353, crop_padding: 2}}"
    )

    def __init__(self, download: bool = True, in_memory: bool = True, **kwargs: Any) -> None:
        super().__init__(in_memory=in_memory, **kwargs)
        self.download = download

    @classmethod
    def check_source(cls) -> str:
        return str(fashion_mnist_dir(None, download=False))

    @property
    def class_names(self) -> tuple[str, ...]:
        return CLASS_NAMES

    def load_splits(self) -> datasets.DatasetDict:
        if hasattr(self, "_loaded"):
            return self._loaded
        val_size = self.val_size if self.limit is None else min(self.val_size, self.limit)
        key = settings_key({"val": val_size, "seed": self.seed, "limit": self.limit})
        path = cache_root(self.cache_dir) / "fashion_mnist" / f"splits-{key}"
        if not path.exists():
            source = fashion_mnist_dir(self.cache_dir, self.download)
            # With a limit only 2 × limit training images (train and validation) and limit test images are
            # encoded as PNG: the 70,000-image cache is built only when it is used.
            train = self._read_split(source, "train", self.pool_size(2))
            test = self._read_split(source, "test", self.limit)
            train, val = holdout(train, val_size, self.seed, "fashion_mnist validation")
            splits = datasets.DatasetDict({"train": train, "validation": val, "test": test})
            atomic_write(path, lambda tmp: splits.save_to_disk(str(tmp)))
        self._loaded = datasets.load_from_disk(str(path))
        return self._loaded

    def _read_split(self, source: Path, split: str, count: int | None) -> datasets.Dataset:
        images, labels = (read_idx(source / name)[:count] for name in FILES[split])
        if images.shape[1:] != (28, 28) or len(images) != len(labels):
            raise ValueError(
                f"{source}: {split} images {images.shape} and labels {labels.shape} do not match"
            )
        features = datasets.Features(
            {"image": datasets.Image(), "label": datasets.ClassLabel(names=list(CLASS_NAMES))}
        )
        encoded = [_png(image) for image in tqdm(images, desc=f"fashion_mnist {split}", unit=" images")]
        return datasets.Dataset.from_dict(
            {"image": encoded, "label": labels.astype(np.int64)}, features=features
        )


def _png(image: np.ndarray) -> dict[str, bytes | None]:
    buffer = io.BytesIO()
    PIL.Image.fromarray(image).save(buffer, format="PNG")
    return {"bytes": buffer.getvalue(), "path": None}
