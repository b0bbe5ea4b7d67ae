"""Seeded hold-out splits: stratified by label where every class can be, plain random where not."""

from __future__ import annotations

import datasets
from pytorch_lightning.utilities import rank_zero_warn

from tabrasa.errors import UserError

Size = int | float  # a number of rows (>= 1) or a fraction of them (< 1)


def holdout(
    rows: datasets.Dataset, size: Size, seed: int, what: str
) -> tuple[datasets.Dataset, datasets.Dataset]:
    """(rest, held out): `size` rows of `rows` held out, stratified by its ClassLabel `label` column.

    Stratification needs at least two rows of every class; with rarer classes (user data) the split is
    plain random and a warning says so, rather than failing.
    """
    if size <= 0 or (isinstance(size, float) and size >= 1):
        raise UserError(
            f"{what} size={size} must be a count >= 1 or a fraction in (0, 1); set data.val_size / test_size"
        )
    count = int(size) if size >= 1 else max(1, round(size * len(rows)))
    if count >= len(rows):
        raise UserError(
            f"{what} size={size} leaves nothing of the {len(rows)} rows to train on; lower data.val_size / "
            f"test_size"
        )
    try:
        split = rows.train_test_split(test_size=count, seed=seed, stratify_by_column="label")
    except ValueError as error:
        rank_zero_warn(f"{what}: a plain random hold-out, since stratifying by label failed ({error})")
        split = rows.train_test_split(test_size=count, seed=seed)
    return split["train"], split["test"]


def train_val_test(
    rows: datasets.Dataset, val_size: Size, test_size: Size, seed: int, name: str
) -> datasets.DatasetDict:
    """One labelled table → seeded train / validation / test (test first, so val_size never moves test)."""
    rest, test = holdout(rows, test_size, seed, f"{name} test")
    train, val = holdout(rest, val_size, seed + 1, f"{name} validation")
    return datasets.DatasetDict({"train": train, "validation": val, "test": test})


def encode_labels(splits: datasets.DatasetDict, column: str = "label") -> datasets.DatasetDict:
    """Raw labels (str or int) → one ClassLabel shared by every split, classes in the order of train's sorted
    values (numbers numerically). A label missing from train, or an empty one, is an error naming it."""
    if isinstance(splits["train"].features[column], datasets.ClassLabel):
        return splits
    values = set(splits["train"].unique(column))
    if None in values or "" in values:
        raise UserError(f"the training data has rows without a {column!r}; fill or drop them")
    ordered = sorted(values, key=lambda v: (isinstance(v, str), v))
    index = {str(v): i for i, v in enumerate(ordered)}

    def encode(batch: dict[str, list[object]], split: str) -> dict[str, list[int]]:
        unknown = sorted({str(v) for v in batch[column]} - set(index))
        if unknown:
            raise UserError(
                f"{split} has labels {unknown[:5]} that the training data lacks, so a model cannot learn "
                f"them; drop those rows or add examples of them to the training data"
            )
        return {column: [index[str(v)] for v in batch[column]]}

    encoded = {}
    for split, rows in splits.items():
        features = rows.features.copy()
        features[column] = datasets.ClassLabel(names=[str(v) for v in ordered])
        encoded[split] = rows.map(
            encode, batched=True, features=features, fn_kwargs={"split": split}, desc=f"labels {split}"
        )
    return datasets.DatasetDict(encoded)


def complete_splits(
    splits: dict[str, datasets.Dataset], val_size: Size, test_size: Size, seed: int, name: str
) -> datasets.DatasetDict:
    """train (+ validation, + test where given) → all three, holding out the missing ones from train."""
    if "train" not in splits:
        raise UserError(
            f"{name} has splits {sorted(splits)} but no train split; add one (the others are held out of it)"
        )
    train = splits["train"]
    test = splits.get("test")
    if test is None:
        train, test = holdout(train, test_size, seed, f"{name} test")
    val = splits.get("validation")
    if val is None:
        train, val = holdout(train, val_size, seed + 1, f"{name} validation")
    return datasets.DatasetDict({"train": train, "validation": val, "test": test})
