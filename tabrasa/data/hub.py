"""Any labelled dataset on the Hugging Face hub, by its id, for each modality (needs the network once).

`datasets.load_dataset(dataset_id, config_name)` downloads and caches it as Arrow under the tabrasa cache;
later runs read the cache (also offline, with HF_DATASETS_OFFLINE=1). The hub's train / validation / test
splits are used where they exist (validation also under valid, val or dev); missing ones are seeded,
stratified hold-outs from train. Labels that are not a ClassLabel already are encoded from train's values.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import datasets

from tabrasa.data.cache import cache_root
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.folders import AUDIO_TOKENIZER_HINT, read_audio
from tabrasa.data.image_classification import ImageClassificationDataModule
from tabrasa.data.protein_classification import ProteinClassificationDataModule, ProteinRecord
from tabrasa.data.splits import Size, complete_splits, encode_labels
from tabrasa.data.text_classification import TextClassificationDataModule
from tabrasa.data.user_data import require_columns, select_columns
from tabrasa.tokenizers.audio import AudioTokenizer

SPLIT_NAMES = {"train": ("train",), "validation": ("validation", "valid", "val", "dev"), "test": ("test",)}


def hub_splits(
    dataset_id: str, config_name: str | None, columns: dict[str, str], cache_dir: str | None,
    val_size: Size, test_size: Size, seed: int,
) -> datasets.DatasetDict:  # fmt: skip
    """The hub dataset's splits, columns renamed per `columns`, labels encoded, missing splits held out."""
    try:
        loaded = datasets.load_dataset(dataset_id, config_name, cache_dir=str(cache_root(cache_dir) / "hf"))
    except (ConnectionError, OSError) as error:
        raise ConnectionError(
            f"hub dataset {dataset_id!r} is neither cached in {cache_root(cache_dir) / 'hf'} nor reachable "
            f"({error}); run once with the network (tabrasa data prepare --config …) to cache it"
        ) from error
    found = {
        ours: loaded[theirs] for ours, names in SPLIT_NAMES.items() for theirs in names if theirs in loaded
    }
    sources = {split: f"hub dataset {dataset_id!r} ({split} split)" for split in found}
    splits = encode_labels(select_columns(datasets.DatasetDict(found), columns, sources))
    return complete_splits(dict(splits), val_size, test_size, seed, dataset_id)


class HubTextDataModule(TextClassificationDataModule):
    """dataset_id (e.g. stanfordnlp/imdb), config_name, and the names of its text and label columns."""

    def __init__(
        self, dataset_id: str, *args: Any, config_name: str | None = None, text_column: str = "text",
        label_column: str = "label", val_size: Size = 0.1, test_size: Size = 0.1, **kwargs: Any,
    ) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.dataset_id, self.config_name = dataset_id, config_name
        self.columns = {text_column: "text", label_column: "label"}
        self.val_size, self.test_size = val_size, test_size

    @property
    def name(self) -> str:  # type: ignore[override]
        return "hub-" + self.dataset_id.replace("/", "--")

    def raw_settings(self) -> dict[str, Any]:
        extra = {
            "config": self.config_name,
            "columns": self.columns,
            "val": self.val_size,
            "test": self.test_size,
        }
        return {**super().raw_settings(), **extra}

    def load_raw(self) -> datasets.DatasetDict:
        args = (self.columns, self.cache_dir, self.val_size, self.test_size, self.seed)
        return hub_splits(self.dataset_id, self.config_name, *args)


class HubImageDataModule(ImageClassificationDataModule):
    """dataset_id (e.g. zalando-datasets/fashion_mnist), config_name, image and label column names."""

    def __init__(
        self, dataset_id: str, *args: Any, config_name: str | None = None, image_column: str = "image",
        label_column: str = "label", test_size: Size = 0.1, **kwargs: Any,
    ) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.dataset_id, self.config_name = dataset_id, config_name
        self.columns = {image_column: "image", label_column: "label"}
        self.test_size = test_size

    def load_splits(self) -> datasets.DatasetDict:
        if not hasattr(self, "_loaded"):
            args = (self.columns, self.cache_dir, self.val_size, self.test_size, self.seed)
            self._loaded = hub_splits(self.dataset_id, self.config_name, *args)
        return self._loaded


class HubAudioDataModule(TabrasaDataModule):
    """dataset_id (e.g. google/speech_commands), config_name, audio and label column names. Audio is decoded
    with soundfile from the stored bytes (or path), not by `datasets`."""

    tokenizer_hint = AUDIO_TOKENIZER_HINT

    def __init__(
        self, dataset_id: str, config_name: str | None = None, audio_column: str = "audio",
        label_column: str = "label", tokenizer: AudioTokenizer | None = None, val_size: Size = 0.1,
        test_size: Size = 0.1, **kwargs: Any,
    ) -> None:  # fmt: skip
        super().__init__(tokenizer=tokenizer, **kwargs)
        self.dataset_id, self.config_name = dataset_id, config_name
        self.columns = {audio_column: "audio", label_column: "label"}
        self.val_size, self.test_size = val_size, test_size

    def load_splits(self) -> datasets.DatasetDict:
        if not hasattr(self, "_loaded"):
            args = (self.columns, self.cache_dir, self.val_size, self.test_size, self.seed)
            splits = hub_splits(self.dataset_id, self.config_name, *args)
            self._loaded = splits.cast_column("audio", datasets.Audio(decode=False))
        return self._loaded

    def raw_input(self, row: dict[str, Any], split: str) -> dict[str, Any]:
        audio = row["audio"]
        wave, rate = read_audio(io.BytesIO(audio["bytes"]) if audio.get("bytes") else audio["path"])
        return {"audio": wave, "sample_rate": rate}


class HubProteinDataModule(ProteinClassificationDataModule):
    """dataset_id, config_name, sequence and label column names. All hub splits are pooled, deduplicated
    and split again, so no identical sequence is in two splits."""

    def __init__(
        self, dataset_id: str, *args: Any, config_name: str | None = None, sequence_column: str = "sequence",
        label_column: str = "label", **kwargs: Any,
    ) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.dataset_id, self.config_name = dataset_id, config_name
        self.sequence_column, self.label_column = sequence_column, label_column

    @property
    def name(self) -> str:
        return "hub-" + self.dataset_id.replace("/", "--")

    def source_settings(self) -> dict[str, Any]:
        return {"config": self.config_name, "columns": [self.sequence_column, self.label_column]}

    def load_records(self) -> Iterator[ProteinRecord]:
        loaded = datasets.load_dataset(
            self.dataset_id, self.config_name, cache_dir=str(cache_root(self.cache_dir) / "hf")
        )
        wanted = {self.sequence_column: "sequence_column", self.label_column: "label_column"}
        for split, rows in loaded.items():
            require_columns(f"hub dataset {self.dataset_id!r} ({split} split)", rows.column_names, wanted)
            label = rows.features.get(self.label_column)
            names = label.names if isinstance(label, datasets.ClassLabel) else None
            for i, row in enumerate(rows.select_columns([self.sequence_column, self.label_column])):
                value = row[self.label_column]
                yield ProteinRecord(
                    f"{split}-{i}", row[self.sequence_column], names[value] if names else str(value)
                )
