"""The one torch Dataset of every data module: indices → raw examples → `tokenizer.encode_batch` → Batch.

The DataLoader calls `__getitems__` with a whole batch's indices, so rows are read in one Arrow call and
tokenised together, and the Batch comes back already collated (`collate_fn=already_batched`): no batch
is split into per-example dicts only to be stacked again.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import datasets
import pyarrow as pa
import torch
from torch.utils.data import Dataset

from tabrasa.tokenizers.base import Batch, Tokenizer

Fetch = Callable[[list[int]], tuple[Sequence[Any], Sequence[int] | torch.Tensor | None]]


class EncodedDataset(Dataset[Batch]):
    """fetch(indices) → (raw examples, labels or None); the tokenizer (in its split's mode) encodes them."""

    def __init__(self, fetch: Fetch, length: int, tokenizer: Tokenizer) -> None:
        self.fetch = fetch
        self.length = length
        self.tokenizer = tokenizer

    def __len__(self) -> int:
        return self.length

    def __getitems__(self, indices: Sequence[int]) -> Batch:  # type: ignore[override]
        raws, labels = self.fetch(list(indices))
        batch = self.tokenizer.encode_batch(raws)
        if labels is not None:
            batch["label"] = torch.as_tensor(labels)
        return batch

    def __getitem__(self, index: int) -> Batch:
        """A batch of one (for code that indexes the dataset directly)."""
        return self.__getitems__([index])


class ArrowRows:
    """fetch for an Arrow table: `to_raw(row)` makes each row's raw example; `label` is the label column."""

    def __init__(self, rows: datasets.Dataset, to_raw: Callable[[dict[str, Any]], Any]) -> None:
        self.rows = rows
        self.to_raw = to_raw

    def __call__(self, indices: list[int]) -> tuple[list[Any], list[int] | None]:
        columns = self.rows[indices]  # one Arrow read for the whole batch
        names = list(columns)
        rows = [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]
        return [self.to_raw(row) for row in rows], columns.get("label")


def already_batched(batch: Batch) -> Batch:
    """The DataLoader's collate_fn: `EncodedDataset.__getitems__` returns a collated Batch."""
    return batch


def arrow_columns(table: pa.Table) -> dict[str, list[Any]]:
    """Columns of an Arrow table as lists: numbers as numpy scalars, lists of numbers as numpy arrays
    (views cut from the flat values by the offsets: ~5 µs a row, where `datasets`' numpy formatter takes
    ~130 µs a row for a 1-second int16 clip)."""
    columns: dict[str, list[Any]] = {}
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            values = column.flatten().to_numpy(zero_copy_only=False)
            offsets = column.offsets.to_numpy() - column.offsets[0].as_py()
            columns[name] = [values[a:b] for a, b in itertools.pairwise(offsets)]
        elif pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
            columns[name] = list(column.to_numpy(zero_copy_only=False))
        else:
            columns[name] = column.to_pylist()
    return columns
