"""The user's own images or sound clips, one subfolder per class (torchvision's ImageFolder layout).

    root/cat/001.png  root/dog/002.jpg …              → seeded, stratified train / validation / test
    root/train/cat/…  root/test/cat/…  [root/val/…]  → those splits; a missing validation is held out

Files are listed once per run (so files added later are seen) into an Arrow table of paths; pixels and
samples are read in the loader workers: images with PIL, audio with soundfile. Before the first step every
kept file is checked once (its header, not its pixels); see `inputs.py` for what happens to bad ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import datasets
import PIL.Image
import soundfile
import torch

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.image_classification import ImageClassificationDataModule
from tabrasa.data.inputs import require_classes
from tabrasa.data.splits import Size, complete_splits
from tabrasa.errors import UserError
from tabrasa.tokenizers.audio import AudioTokenizer

# What the error for a missing audio tokenizer suggests: 5 s of 10 ms log-mel frames.
AUDIO_TOKENIZER_HINT = "{class_path: tabrasa.tokenizers.AudioTokenizer, init_args: {max_frames: 500}}"
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
        raise UserError(f"{what} folder {root} does not exist; point data.root at a folder of class folders")
    found = {
        split: class_files(root / name, suffixes)
        for split, names in SPLIT_FOLDERS.items()
        for name in names
        if (root / name).is_dir()
    }
    if "train" not in found:
        if found:
            raise UserError(
                f"{root} has {sorted(found)} folders but no train/; add one or use class folders only"
            )
        found = {"all": class_files(root, suffixes)}
    if not found.get("train", found.get("all")):
        raise UserError(
            f"{root} has no class subfolders holding {what} files ({', '.join(sorted(suffixes))}); expected "
            f"{root}/<class>/<file> or {root}/train/<class>/<file>"
        )
    return found


def folder_splits(
    root: str | Path, suffixes: frozenset[str], what: str, val_size: Size, test_size: Size, seed: int
) -> datasets.DatasetDict:
    """Scan `root` and return train / validation / test tables of (`what`: file path, ClassLabel label)."""
    found = scan_folder(root, suffixes, what)
    names = sorted(found.get("train", found.get("all", {})))
    require_classes(names, str(root))
    features = datasets.Features({what: datasets.Value("string"), "label": datasets.ClassLabel(names=names)})
    tables = {}
    for split, classes in found.items():
        unknown = sorted(set(classes) - set(names))
        if unknown:
            raise UserError(
                f"{root}/{split} has classes {unknown} that train/ lacks; the model could not learn them"
            )
        rows = [(f, names.index(c)) for c, files in classes.items() for f in files]
        tables[split] = datasets.Dataset.from_dict(
            {what: [f for f, _ in rows], "label": [label for _, label in rows]}, features=features
        )
    if "all" in tables:
        tables["train"] = tables.pop("all")
    return complete_splits(tables, val_size, test_size, seed, str(root))


def image_problem(path: str) -> str | None:
    """Why PIL cannot use the file at `path`, or None. Reads the header and checks the data, no decode."""
    if os.path.getsize(path) == 0:
        return "zero bytes"
    try:
        with PIL.Image.open(path) as image:
            image.verify()
    except Exception as error:  # PIL raises several types for broken files; all mean the same here
        return f"not an image PIL can read ({type(error).__name__}: {error})"
    return None


def audio_problem(path: str) -> str | None:
    """Why soundfile cannot use the file at `path`, or None. Reads only the header."""
    if os.path.getsize(path) == 0:
        return "zero bytes"
    try:
        info = soundfile.info(path)
    except Exception as error:  # libsndfile's errors: corrupt, truncated, unknown format
        return f"not audio soundfile can read ({error})"
    return "holds no samples" if info.frames == 0 else None


def checked_folder(
    data: TabrasaDataModule, root: str, suffixes: frozenset[str], column: str, sizes: tuple[Size, Size],
    problem: Callable[[str], str | None],
) -> datasets.DatasetDict:  # fmt: skip
    """`root`'s splits, `data.limit` files each, every kept file checked once by `problem` (data's screen)."""
    found = folder_splits(root, suffixes, column, *sizes, data.seed)
    checked = {}
    for split, rows in found.items():
        rows = data.take(rows)
        checked[split] = rows.select(data.screen.keep(rows[column], split, problem, lambda _, path: path))
    data.screen.settle(data.skip_bad_inputs)
    return datasets.DatasetDict(checked)


class FolderDataModule(TabrasaDataModule):
    """A data module over a folder of class folders: `root`, hold-outs `val_size` / `test_size`, and its
    kind's files (`suffixes`), whose paths go in `column`, each checked once by `problem`."""

    root: str
    val_size: Size
    test_size: Size
    suffixes: ClassVar[frozenset[str]]
    column: ClassVar[str]
    problem: ClassVar[Callable[[str], str | None]]

    def load_splits(self) -> datasets.DatasetDict:
        if not hasattr(self, "_loaded"):
            sizes = (self.val_size, self.test_size)
            self._loaded = checked_folder(self, self.root, self.suffixes, self.column, sizes, self.problem)
        return self._loaded


class ImageFolderDataModule(FolderDataModule, ImageClassificationDataModule):
    """Images under root/<class>/ (or root/train|val|test/<class>/). Give the tokenizer an image_size when
    the images differ in size. val_size / test_size: held out when root has no such folder."""

    suffixes, column, problem = IMAGE_SUFFIXES, "image", staticmethod(image_problem)

    def __init__(self, root: str, test_size: Size = 0.1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root
        self.test_size = test_size


def read_audio(source: str | BinaryIO) -> tuple[torch.Tensor, int]:
    """A path or file object → (C, T) float32 waveform and its sample rate, read with soundfile."""
    samples, rate = soundfile.read(source, dtype="float32", always_2d=True)  # (T, C)
    return torch.from_numpy(samples.T.copy()), rate


class AudioFolderDataModule(FolderDataModule):
    """Sound clips under root/<class>/ (or root/train|val|test/<class>/), read with soundfile at their own
    rate and resampled by the tokenizer. tokenizer: log-mel settings, max_frames, SpecAugment (training).
    Clips shorter than one 25 ms analysis window are padded with silence by the tokenizer."""

    tokenizer_hint = AUDIO_TOKENIZER_HINT
    suffixes, column, problem = AUDIO_SUFFIXES, "audio", staticmethod(audio_problem)

    def __init__(
        self,
        root: str,
        tokenizer: AudioTokenizer | None = None,
        val_size: Size = 0.1,
        test_size: Size = 0.1,
        **kwargs: Any,
    ) -> None:
        super().__init__(tokenizer=tokenizer, **kwargs)
        self.root = root
        self.val_size = val_size
        self.test_size = test_size

    def raw_input(self, row: dict[str, Any], split: str) -> dict[str, Any]:
        wave, rate = read_audio(row["audio"])
        return {"audio": wave, "sample_rate": rate, "id": row["audio"]}
