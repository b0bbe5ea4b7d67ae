"""Protein sequence classification: labelled sequences → deduplicated, seeded Arrow splits → residue tokens.

Identical sequences are kept once (and dropped when their labels disagree), then split, so no sequence is
in two splits: otherwise a test protein seen in training measures memory, not prediction. With
`split="homology"` whole MMseqs2 clusters go to one split, so no test protein has a close homolog in
training either (see `homology_split`); "random" is the seeded, label-stratified split. Residues are
tokenised in the loader workers (a table lookup), which lets training see a fresh random window of each
long protein every epoch; with `loader.bucket_by_length` batches group proteins of similar length.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from abc import abstractmethod
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, NamedTuple

import datasets
import torch
from pytorch_lightning.utilities import rank_zero_info

from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.homology_split import ClusterSettings, SplitMethod, homology_train_val_test
from tabrasa.data.inputs import require_classes
from tabrasa.data.splits import Size, train_val_test
from tabrasa.errors import UserError
from tabrasa.io import atomic_write
from tabrasa.tokenizers.protein import ProteinTokenizer, clean_sequence

TrainCrop = Literal["random", "truncate"]
SPLIT_RECORD = "split.json"  # beside the cached splits: how they were made, for the run card


class ProteinRecord(NamedTuple):
    id: str
    sequence: str
    label: str


class ProteinClassificationDataModule(TabrasaDataModule):
    """tokenizer: residue alphabet, max_length (with <cls>/<eos>) and the truncation of evaluation splits.
    train_crop: "truncate" uses the tokenizer's truncation policy in every split; "random" trains on a random
    window of max_length - 2 residues of each longer protein, new every epoch (an augmentation, but it
    rarely keeps the N-terminal signal peptide that evaluation's head_tail keeps: off for localisation).
    val_size / test_size: rows or fractions. With `limit`, only the first 3 × limit records of the source
    are read (limit per split), and the sizes are capped at limit.
    split: "random" (seeded, stratified by label) or "homology" (whole MMseqs2 clusters per split, at
    `identity`, 0.3 by default; needs the mmseqs binary). identity: the clustering's sequence identity."""

    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.ProteinTokenizer, "
        "init_args: {max_length: 512, truncation: head_tail, unknown: x}}"
    )

    def __init__(
        self,
        tokenizer: ProteinTokenizer | None = None,
        train_crop: TrainCrop = "truncate",
        val_size: Size = 0.1,
        test_size: Size = 0.1,
        split: SplitMethod = "random",
        identity: float = 0.3,
        **kwargs: Any,
    ) -> None:
        super().__init__(tokenizer=tokenizer, **kwargs)
        if train_crop not in ("random", "truncate"):
            raise ValueError(f"train_crop={train_crop!r} is not known; choose random or truncate")
        if split not in ("random", "homology"):
            raise UserError(f"split={split!r} is not known; choose homology or random")
        self.train_crop = train_crop
        self.split = split
        self.cluster_settings = ClusterSettings(identity=identity) if split == "homology" else None
        self.val_size = val_size if self.limit is None else _capped(val_size, self.limit)
        self.test_size = test_size if self.limit is None else _capped(test_size, self.limit)

    @property
    @abstractmethod
    def name(self) -> str:
        """Folder name of this dataset's cache."""

    @abstractmethod
    def load_records(self) -> Iterable[ProteinRecord]:
        """Every labelled protein of the source, duplicates included, read lazily (limit stops it early)."""

    def source_settings(self) -> dict[str, Any]:
        """Settings that change which records `load_records` gives; part of the cache key."""
        return {}

    @property
    def cache_path(self) -> Path:
        settings = {**self.source_settings(), "val": self.val_size, "test": self.test_size, "seed": self.seed}
        if self.limit is not None:
            settings["limit"] = self.limit
        if self.cluster_settings is not None:  # random splits keep the cache key they always had
            settings["homology"] = dataclasses.asdict(self.cluster_settings)
        return cache_root(self.cache_dir) / self.name / f"splits-{settings_key(settings)}"

    def load_splits(self) -> datasets.DatasetDict:
        if not hasattr(self, "_loaded"):
            path = self.cache_path
            if not path.exists():
                splits, record = self.split_table(self.labelled_table())

                def write(tmp: Path) -> None:
                    splits.save_to_disk(str(tmp))
                    (tmp / SPLIT_RECORD).write_text(json.dumps(record, indent=2) + "\n")

                atomic_write(path, write)
            self._loaded = datasets.load_from_disk(str(path))
            self._report_lengths(self._loaded)
        return self._loaded

    def split_table(self, table: datasets.Dataset) -> tuple[datasets.DatasetDict, dict[str, Any]]:
        """The deduplicated table → (train / validation / test, how they were split)."""
        if self.cluster_settings is None:
            splits = train_val_test(table, self.val_size, self.test_size, self.seed, self.name)
            return splits, {"method": "random", "stratified": True, "seed": self.seed}
        splits, record = homology_train_val_test(
            table, self.val_size, self.test_size, self.seed, self.cluster_settings, self.cache_dir
        )
        rank_zero_info(
            f"[{self.name}] homology split: {record['n_clusters']:,} clusters at identity "
            f"{record['identity']}, fractions {record['achieved_fractions']}"
        )
        return splits, record

    @property
    def split_record(self) -> dict[str, Any]:
        """How the splits were made (method, seed; for homology the MMseqs2 settings, version, number of
        clusters and the fractions reached): the run card's data.split."""
        saved = self.cache_path / SPLIT_RECORD
        return json.loads(saved.read_text()) if saved.exists() else {"method": self.split, "seed": self.seed}

    def labelled_table(self) -> datasets.Dataset:
        """The source's records (the first 3 × limit with a limit) → one deduplicated Arrow table."""
        records = itertools.islice(self.load_records(), self.pool_size())
        unique, dropped = deduplicate(records)
        self.screen.settle(self.skip_bad_inputs)
        names = sorted({r.label for r in unique})
        require_classes(names, self.name)
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
        max_length = getattr(self.tokenizer, "max_length", None)
        if max_length is None:
            return
        for split, rows in splits.items():
            longer = sum(1 for n in rows["length"] if n > max_length - 2)
            if longer:
                random = split == "train" and self.train_crop == "random"
                how = "a random window in training" if random else "the tokenizer's truncation"
                rank_zero_info(
                    f"[{self.name}] {split}: {longer:,} of {len(rows):,} proteins exceed {max_length - 2} "
                    f"residues (max_length={max_length}) and are cut by {how}"
                )

    def lengths(self, split: str) -> list[int]:
        return [n + 2 for n in self.splits[split]["length"]]  # residues + <cls> and <eos>

    def raw_input(self, row: dict[str, Any], split: str) -> dict[str, Any]:
        sequence = row["sequence"]
        if split == "train" and self.train_crop == "random":
            room = self.tokenizer.max_length - 2  # type: ignore[attr-defined]  # <cls> and <eos>
            if len(sequence) > room:
                start = int(torch.randint(len(sequence) - room + 1, ()))  # torch RNG: seeded per worker
                sequence = sequence[start : start + room]
        return {"id": row["id"], "sequence": sequence}


class HomologySplitDataModule(ProteinClassificationDataModule):
    """A protein reference set split by homology clusters by default (`split: random` for the stratified
    random split); identity: the clustering's sequence identity. Everything else as its base's."""

    def __init__(
        self, *args: Any, split: SplitMethod = "homology", identity: float = 0.3, **kwargs: Any
    ) -> None:
        super().__init__(*args, split=split, identity=identity, **kwargs)


def _capped(size: Size, limit: int) -> Size:
    """A hold-out count no larger than limit (fractions stay fractions of the limited pool)."""
    return min(size, limit) if isinstance(size, int) else size


def deduplicate(records: Iterable[ProteinRecord]) -> tuple[list[ProteinRecord], Counter[str]]:
    """Keep each cleaned sequence once; drop sequences whose copies carry different labels."""
    first: dict[str, ProteinRecord] = {}
    labels: dict[str, set[str]] = {}
    dropped: Counter[str] = Counter()
    for record in records:
        sequence = clean_sequence(record.sequence, f"protein {record.id}")
        if sequence in first:
            dropped["duplicate"] += 1
            labels[sequence].add(record.label)
            continue
        first[sequence] = record._replace(sequence=sequence)
        labels[sequence] = {record.label}
    kept = [r for s, r in first.items() if len(labels[s]) == 1]
    dropped["conflict"] = len(first) - len(kept)
    return kept, dropped
