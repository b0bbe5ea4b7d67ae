"""A FASTA reader: (header, sequence) pairs. Written here: Biopython is a large dependency for ten lines."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

from tabrasa.errors import UserError


def read_fasta(path: str | Path) -> Iterator[tuple[str, str]]:
    """Yield (header without '>', sequence with line breaks removed); `.gz` files are read as gzip."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    header: str | None = None
    lines: list[str] = []
    with opener(path, "rt") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.strip()
            if line.startswith(">"):
                if header is not None:
                    yield header, "".join(lines)
                header, lines = line[1:].strip(), []
            elif line and header is None:
                raise UserError(
                    f"{path} line {number}: sequence before the first '>' header; is it FASTA? Give a FASTA "
                    f"file (>header lines, then residues)"
                )
            elif line:
                lines.append(line)
    if header is not None:
        yield header, "".join(lines)
