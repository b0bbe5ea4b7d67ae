"""Protein sequence classification: labelled sequences → deduplicated, seeded Arrow splits → residue tokens.

Identical sequences are kept once (and dropped when their labels disagree), then split, so no sequence is
in two splits: otherwise a test protein seen in training measures memory, not prediction. Residues are
tokenised in the loader workers (a table lookup), which lets training see a fresh random window of each
long protein every epoch; batches group proteins of similar length (`bucketing`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import datasets
import torch
from pytorch_lightning.utilities import rank_zero_info
from torch.utils.data import DataLoader

from tabrasa.data.bucketing import LengthBucketBatchSampler
from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.splits import Size, train_val_test
from tabrasa.tokenizers.base import Batch
from tabrasa.tokenizers.protein import ProteinTokenizer

TrainCrop = Literal["random", "truncate"]


class ProteinRecord(NamedTuple):
    id: str
    sequence: str
    label: str


class ProteinClassificationDataModule(TabrasaDataModule):
    """tokenizer: residue alphabet, max_length (with <cls>/<eos>) and the truncation of evaluation splits.
    train_crop: "truncate" uses the tokenizer's truncation policy in every split; "random" trains on a random
    window of max_length - 2 residues of each longer protein, new every epoch (an augmentation, but it
    rarely keeps the N-terminal signal peptide that evaluation's head_tail keeps: off for localisation).
    bucket_by_length: batch proteins of similar length together. val_size / test_size: rows or fractions."""

    def __init__(
        self,
        tokenizer: ProteinTokenizer | None = None,
        train_crop: TrainCrop = "truncate",
        bucket_by_length: bool = True,
        val_size: Size = 0.1,
        test_size: Size = 0.1,
        cache_dir: str | None = None,
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
        if train_crop not in ("random", "truncate"):
            raise ValueError(f"train_crop={train_crop!r} is not known; choose random or truncate")
        self._tokenizer = tokenizer or ProteinTokenizer(max_length=512, truncation="head_tail", unknown="x")
        self.train_crop = train_crop
        self.bucket_by_length = bucket_by_length
        self.val_size = val_size
        self.test_size = test_size
        self.cache_dir = cache_dir

    @property
    @abstractmethod
    def name(self) -> str:
        """Folder name of this dataset's cache."""

    @abstractmethod
    def load_records(self) -> Iterable[ProteinRecord]:
        """Every labelled protein of the source, duplicates included."""

    def source_settings(self) -> dict[str, Any]:
        """Settings that change which records `load_records` gives; part of the cache key."""
        return {}

    @property
    def tokenizer(self) -> ProteinTokenizer:
        return self._tokenizer

    @property
    def class_names(self) -> Sequence[str]:
        return self.splits["train"].features["label"].names

    @property
    def num_outputs(self) -> int:
        return len(self.class_names)

    @property
    def cache_path(self) -> Path:
        settings = {**self.source_settings(), "val": self.val_size, "test": self.test_size, "seed": self.seed}
        return cache_root(self.cache_dir) / self.name / f"splits-{settings_key(settings)}"

    def load_splits(self) -> datasets.DatasetDict:
        if not hasattr(self, "_loaded"):
            path = self.cache_path
            if not path.exists():
                splits = train_val_test(
                    self.labelled_table(), self.val_size, self.test_size, self.seed, self.name
                )
                splits.save_to_disk(str(path.with_suffix(".tmp")))
                path.with_suffix(".tmp").replace(path)  # atomic: a killed run leaves no half-written cache
            self._loaded = datasets.load_from_disk(str(path))
            self._report_lengths(self._loaded)
        return self._loaded

    def labelled_table(self) -> datasets.Dataset:
        """All records → one deduplicated Arrow table (id, sequence, length, label)."""
        unique, dropped = deduplicate(self.load_records(), self.tokenizer)
        if not unique:
            raise ValueError(f"[{self.name}] the source holds no labelled protein")
        names = sorted({r.label for r in unique})
        merged, conflicting = dropped["duplicate"], dropped["conflict"]
        rank_zero_info(
            f"[{self.name}] {len(unique):,} unique sequences in {len(names)} classes "
            f"({merged:,} copies merged, {conflicting:,} with conflicting labels left out)"
        )
        features = datasets.Features(
            {
                "id": datasets.Value("string"),
                "sequence": datasets.Value("string"),
                "length": datasets.Value("int32"),
                "label": datasets.ClassLabel(names=names),
            }
        )
        columns = {
            "id": [r.id for r in unique],
            "sequence": [r.sequence for r in unique],
            "length": [len(r.sequence) for r in unique],
            "label": [names.index(r.label) for r in unique],
        }
        return datasets.Dataset.from_dict(columns, features=features)

    def _report_lengths(self, splits: datasets.DatasetDict) -> None:
        room = self.tokenizer.max_length - 2
        for split, rows in splits.items():
            longer = sum(1 for n in rows["length"] if n > room)
            if longer:
                how = (
                    "a random window in training"
                    if split == "train" and self.train_crop == "random"
                    else (f"{self.tokenizer.truncation} truncation")
                )
                rank_zero_info(
                    f"[{self.name}] {split}: {longer:,} of {len(rows):,} proteins exceed {room} residues "
                    f"(max_length={self.tokenizer.max_length}) and are cut by {how}"
                )

    def to_example(self, row: dict[str, Any], split: str) -> Batch:
        sequence = row["sequence"]
        room = self.tokenizer.max_length - 2  # <cls> and <eos>
        if split == "train" and self.train_crop == "random" and len(sequence) > room:
            start = int(torch.randint(len(sequence) - room + 1, ()))  # torch RNG: seeded per loader worker
            sequence = sequence[start : start + room]
        return self.tokenizer({"id": row["id"], "sequence": sequence, "label": row["label"]})

    def loader(self, split: str, shuffle: bool = False) -> DataLoader[Batch]:
        if not self.bucket_by_length:  # the base class's loader resumes mid-epoch exactly; this one does not
            return super().loader(split, shuffle)
        lengths = [min(n, self.tokenizer.max_length) for n in self.splits[split]["length"]]
        sampler = LengthBucketBatchSampler(lengths, self.batch_size, seed=self.seed, shuffle=shuffle)
        return DataLoader(
            self.dataset(split),
            batch_sampler=sampler,
            num_workers=self.num_workers,
            collate_fn=self.tokenizer.collate,
            persistent_workers=self.num_workers > 0,
        )


def deduplicate(
    records: Iterable[ProteinRecord], tokenizer: ProteinTokenizer
) -> tuple[list[ProteinRecord], Counter[str]]:
    """Keep each cleaned sequence once; drop sequences whose copies carry different labels."""
    first: dict[str, ProteinRecord] = {}
    labels: dict[str, set[str]] = {}
    dropped: Counter[str] = Counter()
    for record in records:
        sequence = tokenizer.clean(record.sequence, f"protein {record.id}")
        if sequence in first:
            dropped["duplicate"] += 1
            labels[sequence].add(record.label)
            continue
        first[sequence] = record._replace(sequence=sequence)
        labels[sequence] = {record.label}
    kept = [r for s, r in first.items() if len(labels[s]) == 1]
    dropped["conflict"] = len(first) - len(kept)
    return kept, dropped
