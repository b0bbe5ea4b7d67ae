"""Held-out examples of downstream tasks, to leave out of a pretraining set: pretraining on a test example
would let the fine-tuned model score on memory (the same reason labelled splits are deduplicated)."""

from __future__ import annotations

from collections.abc import Iterable

from tabrasa.data.datamodule import TabrasaDataModule

HELD_OUT = ("validation", "test")


def held_out_values(modules: Iterable[TabrasaDataModule], column: str) -> set[str]:
    """`column` of every validation and test row of `modules` (e.g. `text`, `sequence`)."""
    values: set[str] = set()
    for module in modules:
        splits = module.load_splits()
        for split in HELD_OUT:
            if split in splits:
                values.update(splits[split][column])
    return values
