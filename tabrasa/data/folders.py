"""The user's own images or sound clips, one subfolder per class (torchvision's ImageFolder layout).

    root/cat/001.png  root/dog/002.jpg …              → seeded, stratified train / validation / test
    root/train/cat/…  root/test/cat/…  [root/val/…]  → those splits; a missing validation is held out

Files are listed once per run (so files added later are seen) into an Arrow table of paths; pixels and
samples are read in the loader workers: images through `datasets.Image` (PIL), audio with soundfile.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import datasets
import PIL.Image
import soundfile
import torch

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.image_classification import ImageClassificationDataModule
from tabrasa.data.splits import Size, complete_splits
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.base import Batch

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff"})
AUDIO_SUFFIXES = frozenset({".wav", ".flac", ".ogg", ".oga", ".aiff", ".aif", ".mp3"})
SPLIT_FOLDERS = {"train": ("train",), "validation": ("validation", "val", "valid", "dev"), "test": ("test",)}


def class_files(folder: Path, suffixes: frozenset[str]) -> dict[str, list[str]]:
    """{class name: sorted file paths} for each subfolder of `folder` holding files with `suffixes`."""
    classes = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = sorted(str(f) for f in sub.rglob("*") if f.suffix.lower() in suffixes and f.is_file())
        if files:
            classes[sub.name] = files
    return classes


def scan_folder(root: str | Path, suffixes: frozenset[str], what: str) -> dict[str, dict[str, list[str]]]:
    """root → {split: {class: files}}; a root without split folders is one "all" split."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(
            f"{what} folder {root} does not exist; point data.root at a folder of class folders"
        )
    found = {
        split: class_files(root / name, suffixes)
        for split, names in SPLIT_FOLDERS.items()
        for name in names
        if (root / name).is_dir()
    }
    if "train" not in found:
        if found:
            raise ValueError(
                f"{root} has {sorted(found)} folders but no train/; add one or use class folders only"
            )
        found = {"all": class_files(root, suffixes)}
    if not found.get("train", found.get("all")):
        raise ValueError(
            f"{root} has no class subfolders holding {what} files ({', '.join(sorted(suffixes))}); expected "
            f"{root}/<class>/<file> or {root}/train/<class>/<file>"
        )
    return found


def folder_splits(
    root: str | Path, suffixes: frozenset[str], what: str, column: datasets.features.features.FeatureType,
    val_size: Size, test_size: Size, seed: int,
) -> datasets.DatasetDict:  # fmt: skip
    """Scan `root` and return train / validation / test tables of (`column` path, ClassLabel label)."""
    found = scan_folder(root, suffixes, what)
    names = sorted(found.get("train", found.get("all", {})))
    features = datasets.Features({what: column, "label": datasets.ClassLabel(names=names)})
    tables = {}
    for split, classes in found.items():
        unknown = sorted(set(classes) - set(names))
        if unknown:
            raise ValueError(
                f"{root}/{split} has classes {unknown} that train/ lacks; the model could not learn them"
            )
        rows = [(f, names.index(c)) for c, files in classes.items() for f in files]
        tables[split] = datasets.Dataset.from_dict(
            {what: [f for f, _ in rows], "label": [label for _, label in rows]}, features=features
        )
    if "all" in tables:
        tables["train"] = tables.pop("all")
    return complete_splits(tables, val_size, test_size, seed, str(root))


class ImageFolderDataModule(ImageClassificationDataModule):
    """Images under root/<class>/ (or root/train|val|test/<class>/). Give the tokenizer an image_size when
    the images differ in size. val_size / test_size: held out when root has no such folder."""

    def __init__(self, root: str, *args: Any, test_size: Size = 0.1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.root = root
        self.test_size = test_size

    def load_splits(self) -> datasets.DatasetDict:
        if not hasattr(self, "_loaded"):
            self._loaded = folder_splits(
                self.root, IMAGE_SUFFIXES, "image", datasets.Image(), self.val_size, self.test_size, self.seed
            )
        return self._loaded

    def to_example(self, row: dict[str, Any], split: str) -> Batch:
        image = row["image"]
        if isinstance(image, PIL.Image.Image):  # palette, CMYK, RGBA … → what the tokenizer was built for
            image = image.convert({1: "L", 3: "RGB"}.get(self.tokenizer.channels, image.mode))
        return self.tokenizer({"image": image, "label": row["label"]}, train=split == "train")


def read_audio(source: str | BinaryIO) -> tuple[torch.Tensor, int]:
    """A path or file object → (C, T) float32 waveform and its sample rate, read with soundfile."""
    samples, rate = soundfile.read(source, dtype="float32", always_2d=True)  # (T, C)
    return torch.from_numpy(samples.T.copy()), rate


class AudioFolderDataModule(TabrasaDataModule):
    """Sound clips under root/<class>/ (or root/train|val|test/<class>/), read with soundfile at their own
    rate and resampled by the tokenizer. tokenizer: log-mel settings, max_frames, SpecAugment (training)."""

    def __init__(
        self,
        root: str,
        tokenizer: AudioTokenizer | None = None,
        val_size: Size = 0.1,
        test_size: Size = 0.1,
        batch_size: int = 32,
        num_workers: int = 0,
        limit: int | None = None,
        seed: int = 0,
        train_fraction: float = 1.0,
    ) -> None:
        super().__init__(
            batch_size=batch_size,
            num_workers=num_workers,
            limit=limit,
            seed=seed,
            train_fraction=train_fraction,
        )
        self.root = root
        self._tokenizer = tokenizer or AudioTokenizer(max_frames=500)
        self.val_size = val_size
        self.test_size = test_size

    @property
    def tokenizer(self) -> AudioTokenizer:
        return self._tokenizer

    @property
    def class_names(self) -> Sequence[str]:
        return self.splits["train"].features["label"].names

    @property
    def num_outputs(self) -> int:
        return len(self.class_names)

    def load_splits(self) -> datasets.DatasetDict:
        if not hasattr(self, "_loaded"):
            column = datasets.Value("string")  # a path: decoded here with soundfile, not by `datasets`
            self._loaded = folder_splits(
                self.root, AUDIO_SUFFIXES, "audio", column, self.val_size, self.test_size, self.seed
            )
        return self._loaded

    def to_example(self, row: dict[str, Any], split: str) -> Batch:
        wave, rate = read_audio(row["audio"])
        example = {"audio": wave, "sample_rate": rate, "label": row["label"], "id": row["audio"]}
        return self.tokenizer(example, train=split == "train")
