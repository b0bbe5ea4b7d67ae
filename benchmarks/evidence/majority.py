"""The commonest label of a split and its share: what a constant guess scores, the floor an accuracy is
read against (the preset table's majority column, a curve run's `val_majority`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


def majority(labels: Iterable[int]) -> tuple[int, float]:
    """The commonest label and its share of the split, rounded to six places."""
    counts = Counter(int(label) for label in labels)
    if not counts:
        raise ValueError("majority: the split has no labels; a majority share needs at least one")
    label, count = counts.most_common(1)[0]
    return label, round(count / sum(counts.values()), 6)


def majority_share(labels: Iterable[int]) -> float:
    """The share of the commonest label (`val_majority`, read by benchmarks.curves.permutation_rate to
    tell a run that did not train)."""
    return majority(labels)[1]
