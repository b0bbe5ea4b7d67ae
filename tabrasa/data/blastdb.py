"""Read (and, for tests and fixtures, write) NCBI BLAST version-4 protein databases: `.pin`, `.phr`, `.psq`.

Written by hand because nothing on PyPI reads this format without the BLAST+ binaries (Biopython only
runs them). The layout, from NCBI's BLAST+ source (`seqdbfile.cpp`, `seqdbisam` aside):

- `.pin`: uint32 big-endian version (4), uint32 type (1 = protein), uint32 length + title bytes, uint32
  length + date bytes, uint32 number of sequences N, uint64 *little-endian* total residues, uint32 longest
  sequence, then N + 1 big-endian uint32 offsets into `.phr` and N + 1 into `.psq`.
- `.psq`: residues in NCBIstdaa, one byte per residue indexing `-ABCDEFGHIKLMNPQRSTVWXYZU*OJ`; the file
  starts with a NUL and every sequence is followed by one, so sequence i is psq[off[i] : off[i + 1] - 1].
- `.phr`: per sequence one BER-encoded ASN.1 `Blast-def-line-set`; its first def-line's first field,
  `title [0] VisibleString`, holds the FASTA description (`ACCESSION|GO:…` in metastudent-data).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

NCBI_STDAA = "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ"
_DECODE = np.frombuffer(NCBI_STDAA.encode("ascii"), dtype=np.uint8)
_ENCODE = {letter: code for code, letter in enumerate(NCBI_STDAA)}

# BER tags of the def-line-set's opening: SEQUENCE OF, SEQUENCE (Blast-def-line), [0] title, each with the
# indefinite length 0x80 BLAST writes, then a VisibleString (universal tag 26).
_DEFLINE_OPENING = bytes([0x30, 0x80, 0x30, 0x80, 0xA0, 0x80])
_VISIBLE_STRING = 0x1A


class BlastDBError(ValueError):
    """A file that is not a BLAST v4 protein database, or is damaged."""


@dataclass(frozen=True)
class BlastIndex:
    title: str
    date: str
    num_sequences: int
    total_residues: int
    max_length: int
    header_offsets: np.ndarray  # (N + 1,) int64
    sequence_offsets: np.ndarray  # (N + 1,) int64


def read_index(pin: Path) -> BlastIndex:
    data = pin.read_bytes()
    try:
        version, kind = struct.unpack_from(">II", data, 0)
        pos = 8
        title, pos = _read_pascal(data, pos)
        date, pos = _read_pascal(data, pos)
        (count,) = struct.unpack_from(">I", data, pos)
        (total,) = struct.unpack_from("<Q", data, pos + 4)  # the one little-endian field of the format
        (longest,) = struct.unpack_from(">I", data, pos + 12)
        pos += 16
        offsets = np.frombuffer(data, dtype=">u4", count=2 * (count + 1), offset=pos).astype(np.int64)
    except (struct.error, ValueError) as error:
        raise BlastDBError(f"{pin} is truncated or not a BLAST database index ({error})") from error
    if version != 4 or kind != 1:
        raise BlastDBError(
            f"{pin} is a BLAST database of version {version}, type {kind}; only version 4 protein (type 1) "
            f"databases are read (makeblastdb -dbtype prot -blastdb_version 4)"
        )
    return BlastIndex(title, date, count, total, longest, offsets[: count + 1], offsets[count + 1 :])


def _read_pascal(data: bytes, pos: int) -> tuple[str, int]:
    (length,) = struct.unpack_from(">I", data, pos)
    raw = data[pos + 4 : pos + 4 + length]
    if len(raw) != length:
        raise ValueError("string runs past the end of the file")
    return raw.rstrip(b"\0").decode("ascii", errors="replace"), pos + 4 + length


def deflines_title(blob: bytes, source: str) -> str:
    """The first def-line's title from one BER `Blast-def-line-set`."""
    start = len(_DEFLINE_OPENING)
    if blob[:start] != _DEFLINE_OPENING or len(blob) <= start + 1 or blob[start] != _VISIBLE_STRING:
        raise BlastDBError(
            f"{source}: header does not start with a titled Blast-def-line ({blob[:12].hex()})"
        )
    length, pos = _ber_length(blob, start + 1, source)
    return blob[pos : pos + length].decode("ascii", errors="replace")


def _ber_length(blob: bytes, pos: int, source: str) -> tuple[int, int]:
    """BER definite length at blob[pos]: short form (< 0x80) or long form (0x8n, then n bytes)."""
    first = blob[pos]
    if first < 0x80:
        return first, pos + 1
    width = first & 0x7F
    if width == 0 or width > 4 or pos + 1 + width > len(blob):
        raise BlastDBError(f"{source}: bad BER length byte {first:#x} in the header")
    return int.from_bytes(blob[pos + 1 : pos + 1 + width], "big"), pos + 1 + width


class BlastProteinDB:
    """A BLAST v4 protein database given by its base path (`…/goasp.fasta` for `goasp.fasta.pin` etc.).

    `len(db)`, `db.title(i)`, `db.sequence(i)`, and iteration over (title, sequence) pairs. The `.phr` and
    `.psq` files are memory-mapped, so opening is instant and reading all of them costs one pass.
    """

    def __init__(self, base: str | Path) -> None:
        self.base = Path(base)
        paths = {ext: self.base.with_name(self.base.name + ext) for ext in (".pin", ".phr", ".psq")}
        missing = [str(p) for p in paths.values() if not p.exists()]
        if missing:
            raise FileNotFoundError(f"BLAST database {self.base}: missing {', '.join(missing)}")
        self.index = read_index(paths[".pin"])
        self._headers = np.memmap(paths[".phr"], dtype=np.uint8, mode="r")
        self._residues = np.memmap(paths[".psq"], dtype=np.uint8, mode="r")
        for name, offsets, blob in (
            ("phr", self.index.header_offsets, self._headers),
            ("psq", self.index.sequence_offsets, self._residues),
        ):
            if len(offsets) and offsets[-1] > len(blob):
                raise BlastDBError(f"{self.base}.{name} is shorter than its index says ({len(blob)} bytes)")

    def __len__(self) -> int:
        return self.index.num_sequences

    def title(self, i: int) -> str:
        lo, hi = self.index.header_offsets[i], self.index.header_offsets[i + 1]
        return deflines_title(bytes(self._headers[lo:hi]), f"{self.base}.phr sequence {i}")

    def sequence(self, i: int) -> str:
        lo, hi = self.index.sequence_offsets[i], self.index.sequence_offsets[i + 1] - 1  # drop the NUL
        codes = self._residues[lo:hi]
        if codes.size and int(codes.max()) >= len(NCBI_STDAA):
            raise BlastDBError(f"{self.base}.psq sequence {i} holds residue code {int(codes.max())}")
        return _DECODE[codes].tobytes().decode("ascii")

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for i in range(len(self)):
            yield self.title(i), self.sequence(i)


def write_blast_protein_db(
    base: str | Path, records: Sequence[tuple[str, str]], title: str = "tabrasa"
) -> None:
    """Write (title, sequence) records as a BLAST v4 protein database: the inverse of BlastProteinDB.

    Small fixtures for tests and for users without BLAST+; only the fields the reader needs are filled.
    """
    base = Path(base)
    headers, sequences = [], [b"\0"]  # .psq opens with a NUL
    for name, residues in records:
        encoded = name.encode("ascii")
        end_of_contents = b"\0\0" * 3  # closes [0] title, the Blast-def-line and the set
        headers.append(
            _DEFLINE_OPENING + bytes([_VISIBLE_STRING]) + _ber_length_bytes(len(encoded)) + encoded
        )
        headers[-1] += end_of_contents
        unknown = sorted(set(residues) - set(_ENCODE))
        if unknown:
            raise ValueError(f"sequence {name!r} has letters {unknown} outside NCBIstdaa {NCBI_STDAA}")
        sequences.append(bytes(_ENCODE[r] for r in residues) + b"\0")
    header_offsets = np.cumsum([0] + [len(h) for h in headers])  # (N + 1,)
    sequence_offsets = np.cumsum([len(s) for s in sequences])  # (N + 1,): sequence i starts after the NUL
    pin = struct.pack(">II", 4, 1) + _pascal(title) + _pascal("Jan 1, 2000  0:00 AM")
    pin += struct.pack(">I", len(records)) + struct.pack("<Q", sum(len(r) for _, r in records))
    pin += struct.pack(">I", max((len(r) for _, r in records), default=0))
    pin += (
        np.asarray(header_offsets, dtype=">u4").tobytes()
        + np.asarray(sequence_offsets, dtype=">u4").tobytes()
    )
    base.with_name(base.name + ".pin").write_bytes(pin)
    base.with_name(base.name + ".phr").write_bytes(b"".join(headers))
    base.with_name(base.name + ".psq").write_bytes(b"".join(sequences))


def _pascal(text: str) -> bytes:
    raw = text.encode("ascii")
    return struct.pack(">I", len(raw)) + raw


def _ber_length_bytes(length: int) -> bytes:
    if length < 0x80:
        return bytes([length])
    raw = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw
