"""Lanes: one sweep shared by several processes on one machine, each on its own share of the arms.

A 2-core machine runs a learning-curve sweep fastest as two single-thread processes. Each takes every
`count`-th arm starting at `index` and appends to the same runs.jsonl; no arm is in two lanes, so no run
is trained twice, and a lane that stops resumes like any sweep. Reports are written by one more call
without a lane, once every lane has finished: it finds every run logged and trains nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Lane:
    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(
                f"lane {self.index}/{self.count}: give INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 0/2 and 1/2"
            )

    @classmethod
    def parse(cls, text: str) -> Lane:
        """`"1/2"`: the second of two lanes."""
        index, slash, count = text.partition("/")
        if not slash or not index.strip().isdigit() or not count.strip().isdigit():
            raise ValueError(f"lane {text!r}: give INDEX/COUNT, e.g. 0/2 and 1/2 for two processes")
        return cls(int(index), int(count))

    @property
    def shared(self) -> bool:
        return self.count > 1

    def share(self, items: Sequence[T]) -> list[T]:
        """This lane's items: every `count`-th, from `index` (arms listed by fraction within each arm, so
        neighbouring fractions, which cost alike, go to different lanes)."""
        return list(items[self.index :: self.count])
