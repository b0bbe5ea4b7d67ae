"""Fashion-MNIST: the IDX reader, the official split plus a stratified validation hold-out, augmentation in
training only, the install message, and the real files where the Debian package is installed."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import PIL.Image
import pytest
import torch

from tabrasa.data import fashion_mnist
from tabrasa.data.fashion_mnist import CLASS_NAMES, FashionMNISTDataModule, read_idx
from tabrasa.data.loader import LoaderConfig
from tabrasa.data.sources import DataSourceMissingError
from tabrasa.tokenizers.image import ImageTokenizer
from tests.availability import needs


def pixels() -> ImageTokenizer:
    """The preset's tokenizer: 7×7 patches, Fashion-MNIST's pixel statistics, random 2-pixel crops."""
    return ImageTokenizer(patch_size=7, channels=1, mean=0.286, std=0.353, crop_padding=2)


def write_idx(path: Path, array: np.ndarray) -> None:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    with gzip.open(path, "wb") as handle:
        handle.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def fake_fashion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """10 classes × (4 train, 2 test) images whose pixels encode their label."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "fashion"
    folder.mkdir()
    for split, per_class in (("train", 4), ("t10k", 2)):
        labels = np.repeat(np.arange(10), per_class)
        images = (labels[:, None, None] * 20 + rng.integers(0, 10, (len(labels), 28, 28))).astype(np.uint8)
        write_idx(folder / f"{split}-images-idx3-ubyte.gz", images)
        write_idx(folder / f"{split}-labels-idx1-ubyte.gz", labels)
    monkeypatch.setattr(fashion_mnist, "DEBIAN_DIR", folder)
    return folder


def test_read_idx_golden_header(tmp_path: Path) -> None:
    array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "a.gz", array)
    assert np.array_equal(read_idx(tmp_path / "a.gz"), array)
    (tmp_path / "b").write_bytes(b"\x00\x00\x08\x01" + struct.pack(">I", 5) + b"\x01\x02")
    with pytest.raises(ValueError, match="truncated"):
        read_idx(tmp_path / "b")


def test_official_split_and_stratified_validation(fake_fashion: Path, tmp_path: Path) -> None:
    data = FashionMNISTDataModule(
        tokenizer=pixels(), val_size=10, cache_dir=str(tmp_path / "cache"), loader=LoaderConfig(batch_size=8),
        download=False,
    )  # fmt: skip
    splits = data.splits
    assert {k: len(v) for k, v in splits.items()} == {"train": 30, "validation": 10, "test": 20}
    assert sorted(splits["validation"]["label"]) == list(range(10))
    assert data.num_outputs == 10 and data.class_names[9] == "Ankle boot" == CLASS_NAMES[9]
    batch = next(iter(data.test_dataloader()))
    assert batch["pixels"].shape == (8, 1, 28, 28) and batch["pixels"].dtype == torch.float32
    # the pixels still say the label: mean brightness rises 20 grey levels per class
    means = batch["pixels"].mean((1, 2, 3))
    assert torch.corrcoef(torch.stack([means, batch["label"].float()]))[0, 1] > 0.99


def test_augmentation_only_in_training(fake_fashion: Path, tmp_path: Path) -> None:
    data = FashionMNISTDataModule(tokenizer=pixels(), val_size=10, cache_dir=str(tmp_path), download=False)
    row = data.splits["train"][0]
    torch.manual_seed(0)
    assert int(data.splits["train"][0]["label"]) == int(data.dataset("train")[0]["label"][0])
    train = [data.dataset("train")[0]["pixels"][0] for _ in range(6)]
    test = [data.dataset("test")[0]["pixels"][0] for _ in range(2)]
    del row
    assert any(not torch.equal(train[0], t) for t in train[1:])
    assert torch.equal(test[0], test[1])


def test_in_memory_batches_equal_row_by_row_and_crops_per_image(fake_fashion: Path, tmp_path: Path) -> None:
    loader = LoaderConfig(batch_size=8)
    kwargs = {
        "val_size": 10,
        "cache_dir": str(tmp_path),
        "download": False,
        "loader": loader,
        "tokenizer": pixels(),
    }
    rows = FashionMNISTDataModule(in_memory=False, **kwargs)
    held = FashionMNISTDataModule(in_memory=True, **kwargs)
    for split in ("validation", "test"):  # no augmentation: identical tensors and labels
        a = next(iter(rows.loader(split)))
        b = next(iter(held.loader(split)))
        assert torch.equal(a["pixels"], b["pixels"]) and torch.equal(a["label"], b["label"])
    torch.manual_seed(0)
    crops = held.dataset("train").__getitems__([0] * 16)["pixels"]  # one image, 16 independent crops
    assert len({c.numpy().tobytes() for c in crops}) > 4, "each image draws its own offset"
    plain = held.dataset("validation")[0]["pixels"]
    assert crops.shape[1:] == plain.shape[1:]


def test_in_memory_rejects_images_of_different_sizes() -> None:
    import datasets

    from tabrasa.data.image_tensors import decode_images

    images = [PIL.Image.new("L", (4, 4)), PIL.Image.new("L", (5, 5))]
    features = datasets.Features({"image": datasets.Image(), "label": datasets.Value("int64")})
    rows = datasets.Dataset.from_dict({"image": images, "label": [0, 1]}, features=features)
    with pytest.raises(ValueError, match=r"row 1.*in_memory=False"):
        decode_images(rows, "toy")


def test_missing_files_name_the_debian_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fashion_mnist, "DEBIAN_DIR", tmp_path / "absent")
    with pytest.raises(DataSourceMissingError, match="apt-get install dataset-fashion-mnist"):
        FashionMNISTDataModule(tokenizer=pixels(), cache_dir=str(tmp_path), download=False).load_splits()


@needs(
    (fashion_mnist.DEBIAN_DIR / "t10k-labels-idx1-ubyte.gz").exists(), "apt-get install dataset-fashion-mnist"
)
def test_real_files_have_the_official_sizes() -> None:
    labels = read_idx(fashion_mnist.DEBIAN_DIR / "t10k-labels-idx1-ubyte.gz")
    images = read_idx(fashion_mnist.DEBIAN_DIR / "train-images-idx3-ubyte.gz")
    assert images.shape == (60_000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [1000] * 10
