"""Raw files → raw examples, one reader per modality; an input that cannot be read is kept with its reason.

Every reader returns `RawInput`s in file order: an identifier the user can find again (line number, row,
file path, FASTA id), the raw example the run's tokenizer encodes, or the reason it could not be read, so
one bad file or line is listed in the output and the rest are still predicted.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tabrasa.deploy.modality import SUFFIXES, Modality, check_modality
from tabrasa.errors import UserError


@dataclass(frozen=True)
class RawInput:
    id: str
    value: Any = None
    error: str | None = None


def read_inputs(path: str | Path, modality: Modality, column: str | None = None) -> list[RawInput]:
    """All raw examples under `path` (a file or a folder) for a run of `modality`."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"input {path} does not exist; give a file or a folder of {modality} inputs")
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    if not files:
        raise UserError(f"input folder {path} is empty; put the {modality} files to predict in it")
    check_modality(path, files, modality)
    files = [f for f in files if f.suffix.lower() in SUFFIXES[modality]]
    if path.is_file() and path.stat().st_size == 0:
        raise UserError(f"input file {path} is empty; it needs at least one example")
    if modality == "image":
        items = [read_image(f) for f in files]
    elif modality == "audio":
        items = [read_audio(f) for f in files]
    elif path.is_dir() and modality == "text":  # a folder of .txt files: one example per file
        items = [read_whole_text(f) for f in files]
    else:
        items = [item for f in files for item in read_records(f, modality, column)]
    if not items:
        raise UserError(f"input {path} holds no examples (only blank lines?); it needs at least one")
    return items


def read_records(path: Path, modality: Modality, column: str | None) -> Iterator[RawInput]:
    suffix = path.suffix.lower()
    if modality == "protein" and suffix != ".txt":
        yield from read_fasta(path)
    elif suffix in (".csv", ".tsv"):
        yield from read_table(path, column or "text", "\t" if suffix == ".tsv" else ",")
    elif suffix == ".jsonl":
        yield from read_jsonl(path, column or "text")
    else:
        yield from read_lines(path)


def read_lines(path: Path) -> Iterator[RawInput]:
    """One example per non-blank line; the id is `FILE:LINE` (1-based), blank lines are skipped."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield RawInput(f"{path}:{number}", line.rstrip("\r\n"))


def read_table(path: Path, column: str, delimiter: str) -> Iterator[RawInput]:
    """Rows of a CSV/TSV with a header; the id is `FILE:ROW` (1-based data rows)."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        if column not in (reader.fieldnames or []):
            raise UserError(
                f"{path} has no column {column!r} (columns: {reader.fieldnames}); choose one with --column"
            )
        for number, row in enumerate(reader, start=1):
            text = row.get(column)
            yield (
                RawInput(f"{path}:{number}", text)
                if text
                else RawInput(f"{path}:{number}", error=f"column {column!r} is empty")
            )


def read_jsonl(path: Path, key: str) -> Iterator[RawInput]:
    """One JSON object per line; the id is `FILE:LINE`."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                yield RawInput(where, error=f"not valid JSON ({error.msg})")
                continue
            value = record.get(key) if isinstance(record, dict) else None
            if not isinstance(value, str) or not value:
                yield RawInput(where, error=f"no text under key {key!r} (choose the key with --column)")
            else:
                yield RawInput(where, value)


def read_fasta(path: Path) -> Iterator[RawInput]:
    """FASTA records; the id is the first word of the header. Residues before any header are an error."""
    name: str | None = None
    lines: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if line.startswith(">"):
                if name is not None:
                    yield fasta_record(name, lines)
                name, lines = (line[1:].split() or [""])[0], []
            elif line and name is None:
                raise UserError(f"{path} is not FASTA: residues before the first '>' header line")
            elif line:
                lines.append(line)
    if name is not None:
        yield fasta_record(name, lines)


def fasta_record(name: str, lines: list[str]) -> RawInput:
    sequence = "".join(lines)
    return RawInput(name, sequence) if sequence else RawInput(name, error="record has no residues")


def read_whole_text(path: Path) -> RawInput:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return RawInput(str(path), error=f"cannot read text: {error}")
    return RawInput(str(path), text) if text.strip() else RawInput(str(path), error="file is empty")


def read_image(path: Path) -> RawInput:
    """Decoded fully here (PIL opens lazily), so a truncated file is caught now, not inside a batch."""
    import PIL.Image

    try:
        with PIL.Image.open(path) as image:
            image.load()
            return RawInput(str(path), image.copy())
    except (OSError, SyntaxError, ValueError, PIL.Image.DecompressionBombError) as error:
        return RawInput(str(path), error=f"cannot decode image: {error}")


def read_audio(path: Path) -> RawInput:
    """soundfile (libsndfile): WAV, FLAC, OGG; channels are averaged by the tokenizer."""
    import soundfile

    try:
        wave, rate = soundfile.read(str(path), dtype="float32", always_2d=True)  # (T, C)
    except (RuntimeError, OSError, soundfile.LibsndfileError) as error:
        return RawInput(str(path), error=f"cannot decode audio: {error}")
    if wave.shape[0] == 0:
        return RawInput(str(path), error="audio clip has no samples")
    return RawInput(str(path), {"audio": np.ascontiguousarray(wave.T), "sample_rate": int(rate)})
