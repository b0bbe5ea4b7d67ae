"""The BLAST v4 protein database reader: hand-built bytes pin the format, a round trip covers the writer,
and where metastudent-data is installed its first records are checked."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from tabrasa.data.blastdb import (
    NCBI_STDAA,
    BlastDBError,
    BlastProteinDB,
    deflines_title,
    write_blast_protein_db,
)
from tests.availability import needs


def test_reads_a_database_written_byte_by_byte(tmp_path: Path) -> None:
    title = b"P1|GO:0005737"
    header = bytes([0x30, 0x80, 0x30, 0x80, 0xA0, 0x80, 0x1A, len(title)]) + title + b"\0" * 6
    residues = bytes(NCBI_STDAA.index(r) for r in "MKV")  # NCBIstdaa: M=12, K=10, V=19
    assert residues == bytes([12, 10, 19])
    pin = struct.pack(">II", 4, 1) + struct.pack(">I", 2) + b"db" + struct.pack(">I", 4) + b"date"
    pin += struct.pack(">I", 1) + struct.pack("<Q", 3) + struct.pack(">I", 3)  # residues: little-endian
    pin += struct.pack(">II", 0, len(header)) + struct.pack(">II", 1, 5)  # .psq = NUL M K V NUL
    (tmp_path / "t.pin").write_bytes(pin)
    (tmp_path / "t.phr").write_bytes(header)
    (tmp_path / "t.psq").write_bytes(b"\0" + residues + b"\0")
    db = BlastProteinDB(tmp_path / "t")
    assert (len(db), db.index.title, db.index.total_residues, db.index.max_length) == (1, "db", 3, 3)
    assert list(db) == [("P1|GO:0005737", "MKV")]


def test_round_trip_with_long_titles_and_every_letter(tmp_path: Path) -> None:
    records = [
        ("A" * 300 + "|GO:1", NCBI_STDAA[1:]),
        ("short", "M"),
        ("x" * 70000, "ACDEFGHIKLMNPQRSTVWY" * 50),
    ]
    write_blast_protein_db(tmp_path / "db", records)
    db = BlastProteinDB(tmp_path / "db")
    assert list(db) == records
    assert db.index.total_residues == sum(len(s) for _, s in records)


def test_bad_files_are_named(tmp_path: Path) -> None:
    write_blast_protein_db(tmp_path / "db", [("a", "MK")])
    pin = bytearray((tmp_path / "db.pin").read_bytes())
    pin[7] = 0  # type 0 = nucleotide
    (tmp_path / "db.pin").write_bytes(bytes(pin))
    with pytest.raises(BlastDBError, match="protein"):
        BlastProteinDB(tmp_path / "db")
    with pytest.raises(FileNotFoundError, match="missing"):
        BlastProteinDB(tmp_path / "absent")
    with pytest.raises(BlastDBError, match="Blast-def-line"):
        deflines_title(b"\x31\x80", "x")
    with pytest.raises(ValueError, match="outside NCBIstdaa"):
        write_blast_protein_db(tmp_path / "bad", [("a", "M1")])


METASTUDENT_CCO = Path("/usr/share/metastudent-data/dataset_201401/CCO/goasp.fasta")


@needs(METASTUDENT_CCO.with_suffix(".fasta.pin").exists(), "apt-get install metastudent-data")
def test_metastudent_cco_reads() -> None:
    db = BlastProteinDB(METASTUDENT_CCO)
    assert len(db) == 392_822
    assert db.title(0) == "C6DJ78|GO:0005737,GO:0005737,GO:0005737"
    first = db.sequence(0)
    assert (
        first.startswith("MSENQQINQKQQYNLNKLQKRLRRNVGEAIADFNMIEEGDRIMVCLSGGKDSFTMLEILR") and len(first) == 311
    )
    lengths = np.diff(db.index.sequence_offsets) - 1
    assert int(lengths.sum()) == db.index.total_residues and int(lengths.max()) == db.index.max_length
