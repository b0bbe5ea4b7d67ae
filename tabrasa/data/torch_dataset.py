"""A map-style torch Dataset over a Hugging Face `datasets.Dataset`, tokenised row by row in workers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import datasets
from torch.utils.data import Dataset

from tabrasa.tokenizers.base import Batch


class RowDataset(Dataset[Batch]):
    """Applies `to_example` (usually a Tokenizer call) to each Arrow row when a worker asks for it."""

    def __init__(self, rows: datasets.Dataset, to_example: Callable[[dict[str, Any]], Batch]) -> None:
        self.rows = rows
        self.to_example = to_example

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> Batch:
        return self.to_example(self.rows[index])
