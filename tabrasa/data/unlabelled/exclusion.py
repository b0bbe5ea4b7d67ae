"""Held-out examples of downstream tasks, to leave out of a pretraining set: pretraining on a test example
would let the fine-tuned model score on memory (the same reason labelled splits are deduplicated)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import datasets

HELD_OUT = ("validation", "test")


def held_out_values(splits: Iterable[Mapping[str, datasets.Dataset]], column: str) -> set[str]:
    """`column` of every validation and test row of each task's `splits` (e.g. `text`, `sequence`)."""
    values: set[str] = set()
    for task in splits:
        for split in HELD_OUT:
            if split in task:
                values.update(task[split][column])
    return values
