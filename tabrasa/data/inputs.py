"""The one pass over a user's raw inputs before the first step: every unusable example, listed at once.

A data module hands each raw source (a split's files, a CSV) to `InputScreen.keep`, which drops the
examples it cannot use and remembers where and why. `settle` then either stops the run with the whole
list and the setting that skips them, or (with `skip_bad_inputs`) logs how many each source lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pytorch_lightning.utilities import rank_zero_warn

from tabrasa.errors import UserError

T = TypeVar("T")
SHOWN = 20  # problems listed in the error; the rest are counted


@dataclass(frozen=True)
class BadInput:
    source: str  # the split or file it came from
    where: str  # file path or row number
    why: str


@dataclass
class InputScreen:
    """Collects unusable raw examples; `setting` names the switch that skips them in the error."""

    setting: str = "--data.skip_bad_inputs true"
    found: list[BadInput] = field(default_factory=list)

    def keep(
        self,
        items: Iterable[T],
        source: str,
        problem: Callable[[T], str | None],
        where: Callable[[int, T], str],
    ) -> list[int]:
        """Indices of the usable items; each unusable one is recorded with its place and the reason."""
        kept = []
        for index, item in enumerate(items):
            why = problem(item)
            if why is None:
                kept.append(index)
            else:
                self.found.append(BadInput(source, where(index, item), why))
        return kept

    def add(self, source: str, where: str, why: str) -> None:
        self.found.append(BadInput(source, where, why))

    def settle(self, skip: bool) -> None:
        """Stop with the list (skip=False) or warn how many were skipped per source (skip=True)."""
        if not self.found:
            return
        if not skip:
            lines = [f"  {b.where}: {b.why}" for b in self.found[:SHOWN]]
            if len(self.found) > SHOWN:
                lines.append(f"  … and {len(self.found) - SHOWN} more")
            raise UserError(
                f"{len(self.found)} input(s) cannot be used:\n" + "\n".join(lines) + "\n"
                f"Fix or remove them, or skip them with {self.setting}"
            )
        counts = Counter(b.source for b in self.found)
        summary = ", ".join(f"{source}: {n}" for source, n in counts.items())
        rank_zero_warn(f"skipped {len(self.found)} unusable input(s) ({summary})")
        self.found.clear()


def require_classes(names: Sequence[Any], where: str) -> None:
    """A classifier needs two classes; one is a user's mistake (a wrong column, a filtered file)."""
    if len(names) < 2:
        found = f"found 1 ({names[0]})" if names else "found none"
        raise UserError(
            f"a classifier needs at least 2 classes, {found} in {where}; check the label column or folders"
        )
