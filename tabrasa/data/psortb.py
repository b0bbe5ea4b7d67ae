"""Bacterial protein localisation: PSORTb 3.0's Gram-negative reference set (Yu et al. 2010), 5 classes.

The Debian package `psortb` ships the set as plain FASTA whose headers read
`>gi [Localization] [subcategory] description`. Proteins with two localisations (`[A,B]`, about 1%) are
left out, so every protein has exactly one of: Cytoplasmic, CytoplasmicMembrane, Periplasmic,
OuterMembrane, Extracellular. PSORTb publishes no split; ours is seeded, after deduplication, and keeps
whole MMseqs2 clusters (30% identity) in one split (see `protein_classification`, `homology_split`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from tabrasa.data.cache import cache_root
from tabrasa.data.fasta import read_fasta
from tabrasa.data.protein_classification import HomologySplitDataModule, ProteinRecord
from tabrasa.data.sources import first_existing

Organism = Literal["gramneg", "grampos", "archaea"]
SCLBLAST = Path("conf/analysis/sclblast")
INSTALL = (
    "the Debian package psortb. Its data files alone, without Perl and BioPerl:\n"
    "  apt-get download psortb && dpkg -x psortb_*.deb"
    ' "${TABRASA_CACHE:-$HOME/.cache/tabrasa}/debian/psortb"\n'
    "or the whole package: apt-get install psortb"
)
_HEADER = re.compile(r"^(\S+)\s+\[([^\]]+)\]")


def psortb_roots(cache_dir: str | None = None) -> list[Path]:
    """Where PSORTb's files may be: the installed package, then tabrasa's extracted copy."""
    extracted = cache_root(cache_dir) / "debian" / "psortb" / "usr" / "lib" / "psort"
    return [Path(os.environ.get("PSORTB_ROOT", "/usr/lib/psort")), extracted]


def sclblast_path(organism: Organism = "gramneg", cache_dir: str | None = None) -> Path:
    candidates = [root / SCLBLAST / organism / "sclblast" for root in psortb_roots(cache_dir)]
    return first_existing(candidates, f"PSORTb's {organism} reference set (sclblast)", INSTALL)


def psortb_records(path: Path) -> Iterator[ProteinRecord]:
    """Single-localisation records of one sclblast FASTA file; dual ones ("A,B") are skipped."""
    for header, sequence in read_fasta(path):
        match = _HEADER.match(header)
        if match is None:
            raise ValueError(f"{path}: header {header!r} has no [Localization] after the id")
        gi, localisation = match.groups()
        if "," not in localisation:
            yield ProteinRecord(gi, sequence, localisation)


class PSORTbDataModule(HomologySplitDataModule):
    """PSORTb's reference set for `organism` (gramneg: 11,190 unique proteins, majority class 69%), split
    by homology clusters by default (`split: random` for the stratified random split)."""

    def __init__(self, *args: Any, organism: Organism = "gramneg", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.organism = organism

    @property
    def name(self) -> str:
        return f"psortb-{self.organism}"

    def source_settings(self) -> dict[str, Any]:
        return {"organism": self.organism}

    def pool_size(self, splits: int = 3) -> int | None:
        # The reference FASTA (11k records) reads in milliseconds but is ordered by class, so a prefix of
        # 3 × limit records would hold a single class. Read it all; `take` still keeps `limit` per split.
        return None

    def load_records(self) -> Iterable[ProteinRecord]:
        return psortb_records(sclblast_path(self.organism, self.cache_dir))

    @classmethod
    def check_source(cls) -> str:
        return str(sclblast_path())
