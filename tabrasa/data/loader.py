"""The loader settings every data module shares, as one value: `--data.loader.batch_size 16`."""

from __future__ import annotations

from dataclasses import dataclass

from tabrasa.errors import UserError


@dataclass(frozen=True)
class LoaderConfig:
    """batch_size: examples per step and device. num_workers: loader processes (0 = the main process).
    bucket_by_length: batch examples of similar length together (text, proteins: less padding); needs a
    data module that knows its examples' lengths, and gives up exact mid-epoch resumption."""

    batch_size: int = 32
    num_workers: int = 0
    bucket_by_length: bool = False

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise UserError(f"loader.batch_size={self.batch_size} must be >= 1")
        if self.num_workers < 0:
            raise UserError(f"loader.num_workers={self.num_workers} must be >= 0 (0: the main process)")
