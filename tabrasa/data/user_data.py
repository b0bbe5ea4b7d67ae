"""The user's own labelled text (CSV, TSV or JSON Lines) and proteins (FASTA), ready for any config.

Text: one file, or one per split, with a text column and a label column (strings or integers); read with
Hugging Face `datasets`' csv/json builders and cached as Arrow. Proteins: one FASTA file whose labels are
in the headers (a regular expression picks them) or in a side CSV keyed by the header's first word.
Missing splits are seeded, stratified hold-outs; for proteins identical sequences are merged first.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import datasets
from datasets.exceptions import DatasetGenerationError

from tabrasa.data.cache import cache_root
from tabrasa.data.fasta import read_fasta
from tabrasa.data.inputs import require_classes
from tabrasa.data.protein_classification import ProteinClassificationDataModule, ProteinRecord
from tabrasa.data.splits import Size, complete_splits, encode_labels
from tabrasa.data.text_classification import TextClassificationDataModule
from tabrasa.errors import UserError

DEFAULT_LABEL_PATTERN = r"^\S+\s+(\S+)"  # a FASTA header's second word: >P12345 nucleus …
BUILDERS = {
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"delimiter": "\t"}),
    ".json": ("json", {}),
    ".jsonl": ("json", {}),
}


def file_fingerprint(path: str | Path) -> tuple[str, int, int]:
    """(absolute path, size, mtime): a changed file gets a new cache entry."""
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise UserError(f"data file {path} does not exist; check the path in the data section")
    stat = path.stat()
    return str(path), stat.st_size, stat.st_mtime_ns


def read_table_files(files: dict[str, str], cache_dir: str | None) -> datasets.DatasetDict:
    """{split: CSV/TSV/JSONL path} → DatasetDict through `datasets.load_dataset` (cached as Arrow)."""
    suffixes = {Path(p).suffix.lower() for p in files.values()}
    if len(suffixes) != 1 or next(iter(suffixes)) not in BUILDERS:
        raise UserError(
            f"data files {sorted(files.values())} must share one format: .csv, .tsv, .json or .jsonl; "
            f"convert them or rename them to say which"
        )
    suffix = suffixes.pop()
    for path in files.values():
        _require_rows(path, header=suffix in (".csv", ".tsv"))
    builder, options = BUILDERS[suffix]
    try:
        return datasets.load_dataset(
            builder, data_files=files, cache_dir=str(cache_root(cache_dir) / "hf"), **options
        )
    except DatasetGenerationError as error:  # the parser's own error is its cause
        cause = error.__cause__ or error
        raise UserError(
            f"data file {' or '.join(sorted(files.values()))} cannot be read as {suffix[1:].upper()} "
            f"({type(cause).__name__}: {str(cause).strip()}); fix it or rename it to its format's suffix"
        ) from error


def _require_rows(path: str, header: bool) -> None:
    """A file with no examples (empty, or a header only) is refused before the parser sees it."""
    with open(file_fingerprint(path)[0], encoding="utf-8", errors="replace") as handle:
        lines = [line for _, line in zip(range(2), (line for line in handle if line.strip()), strict=False)]
    if len(lines) < 1 + header:
        what = "a header but no rows" if lines else "nothing"
        raise UserError(f"data file {path} holds {what}; it needs one row per example")


def require_columns(where: str, present: Sequence[str], wanted: Mapping[str, str]) -> None:
    """wanted: column name → the data setting that gives it. A column `where` lacks is a UserError naming
    the file, the column, the columns it has and the setting to change."""
    missing = {column: setting for column, setting in wanted.items() if column not in present}
    if missing:
        has = ", ".join(repr(c) for c in present) or "none"
        lacks = " and ".join(repr(c) for c in missing)
        fix = " and ".join(f"--data.{setting}" for setting in missing.values())
        plural = "s" if len(missing) > 1 else ""
        raise UserError(
            f"{where} has no column{plural} {lacks} (its columns: {has}); "
            f"set {fix} to the name{plural} it uses"
        )


def select_columns(
    splits: datasets.DatasetDict, columns: dict[str, str], sources: Mapping[str, str]
) -> datasets.DatasetDict:
    """Keep `columns` (their name in the data → tabrasa's name, whose setting is `{tabrasa's}_column`) and
    rename them; `sources` names each split's origin (its file) for the error on a missing one."""
    out = {}
    wanted = {theirs: f"{ours}_column" for theirs, ours in columns.items()}
    for split, rows in splits.items():
        require_columns(sources[split], rows.column_names, wanted)
        rows = rows.select_columns(list(columns))
        out[split] = rows.rename_columns({k: v for k, v in columns.items() if k != v})
    return datasets.DatasetDict(out)


class TextFileDataModule(TextClassificationDataModule):
    """train_path (and optional validation_path / test_path): .csv, .tsv, .json or .jsonl files with
    `text_column` and `label_column`. val_size / test_size: held out of train where a file is not given."""

    def __init__(
        self,
        train_path: str,
        *args: Any,
        validation_path: str | None = None,
        test_path: str | None = None,
        text_column: str = "text",
        label_column: str = "label",
        val_size: Size = 0.1,
        test_size: Size = 0.1,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        paths = {"train": train_path, "validation": validation_path, "test": test_path}
        self.files = {split: str(Path(p).expanduser()) for split, p in paths.items() if p is not None}
        self.columns = {text_column: "text", label_column: "label"}
        self.val_size = val_size
        self.test_size = test_size

    name = "user-text"  # type: ignore[assignment]

    def raw_settings(self) -> dict[str, Any]:
        files = {split: file_fingerprint(p) for split, p in self.files.items()}
        return {
            **super().raw_settings(),
            "files": files,
            "columns": self.columns,
            "val": self.val_size,
            "test": self.test_size,
        }

    @property
    def class_names(self) -> Sequence[str]:
        return self.load_splits()["train"].features["label"].names

    def load_raw(self) -> datasets.DatasetDict:
        sources = {split: f"data file {path}" for split, path in self.files.items()}
        tables = select_columns(read_table_files(self.files, self.cache_dir), self.columns, sources)
        tables = self._screened(tables)
        splits = encode_labels(tables)
        require_classes(splits["train"].features["label"].names, self.files["train"])
        return complete_splits(dict(splits), self.val_size, self.test_size, self.seed, "text data")

    def _screened(self, tables: datasets.DatasetDict) -> datasets.DatasetDict:
        """Rows without text or label, and (in validation / test files) labels the training file lacks, are
        listed by file and row; the run stops on them unless skip_bad_inputs."""
        known = {str(v) for v in tables["train"]["label"] if _filled(v)}
        kept = {}
        for split, rows in tables.items():
            path = self.files[split]
            keep = self.screen.keep(
                zip(rows["text"], rows["label"], strict=True),
                split,
                partial(_row_problem, known=None if split == "train" else known),
                partial(_row_place, path=path),
            )
            kept[split] = rows.select(keep)
        self.screen.settle(self.skip_bad_inputs)
        return datasets.DatasetDict(kept)


def _row_place(index: int, row: object, path: str) -> str:
    """Where a user finds row `index`: its spreadsheet row (the header is row 1) or its JSON Lines line."""
    if Path(path).suffix.lower() in (".csv", ".tsv"):
        return f"{path} row {index + 2}"
    return f"{path} line {index + 1}"


def _filled(value: object) -> bool:
    return value is not None and str(value).strip() != ""


def _row_problem(row: tuple[object, object], known: set[str] | None) -> str | None:
    text, label = row
    if not _filled(label):
        return "no label"
    if not isinstance(text, str) or not text.strip():
        return "no text"
    if known is not None and str(label) not in known:
        return f"label {label!r} is not among the training file's labels"
    return None


class FastaDataModule(ProteinClassificationDataModule):
    """path: a FASTA file (or .fasta.gz). Labels: `labels_csv` (columns `id_column`, `label_column`; id =
    the header's first word) if given, else `label_pattern`'s first group searched in each header; the
    default takes the header's second word (`>P12345 nucleus …`), `\\[([^\\]]+)\\]` takes `[Label]`."""

    def __init__(
        self,
        path: str,
        *args: Any,
        label_pattern: str = DEFAULT_LABEL_PATTERN,
        labels_csv: str | None = None,
        id_column: str = "id",
        label_column: str = "label",
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.path = str(Path(path).expanduser())
        self.label_pattern = re.compile(label_pattern)
        if self.label_pattern.groups < 1:
            raise UserError(
                f"label_pattern={label_pattern!r} needs a (group) around the label, as the default "
                f"{DEFAULT_LABEL_PATTERN!r} has"
            )
        self.labels_csv = labels_csv
        self.id_column = id_column
        self.label_column = label_column

    @property
    def name(self) -> str:
        return "user-fasta"

    def source_settings(self) -> dict[str, Any]:
        side = None if self.labels_csv is None else file_fingerprint(self.labels_csv)
        return {"fasta": file_fingerprint(self.path), "pattern": self.label_pattern.pattern, "csv": side}

    def load_records(self) -> Iterator[ProteinRecord]:
        """Labelled records in file order; a record without a label or residues goes to the input screen."""
        side = None if self.labels_csv is None else self._side_labels()
        for number, (header, sequence) in enumerate(read_fasta(self.path), start=1):
            identifier = header.split(maxsplit=1)[0] if header else ""
            label, why = self._label(header, identifier, side)
            if why is None and not sequence.strip():
                why = "has no residues"
            if why is not None:
                self.screen.add("fasta", f"{self.path} record {number} ({identifier or 'no id'})", why)
                continue
            yield ProteinRecord(identifier, sequence, str(label))

    def _label(
        self, header: str, identifier: str, side: dict[str, str] | None
    ) -> tuple[str | None, str | None]:
        """(label, None) or (None, why there is none)."""
        if side is not None:
            label = side.get(identifier)
            return (label, None) if label else (None, f"no row in {self.labels_csv}")
        match = self.label_pattern.search(header)
        if match is None:
            return None, (
                f"header {header!r} does not match label_pattern {self.label_pattern.pattern!r} "
                f"(set data.label_pattern or data.labels_csv)"
            )
        return match.group(1), None

    def _side_labels(self) -> dict[str, str]:
        assert self.labels_csv is not None
        file_fingerprint(self.labels_csv)  # a missing file: the one-line error naming it
        with open(self.labels_csv, newline="") as handle:
            reader = csv.DictReader(handle)
            wanted = {self.id_column: "id_column", self.label_column: "label_column"}
            require_columns(f"labels file {self.labels_csv}", reader.fieldnames or [], wanted)
            return {row[self.id_column]: row[self.label_column] for row in reader}
