"""Localisation at scale: UniProt proteins (January 2014) with Gene Ontology cellular-component terms.

The Debian package `metastudent-data` (Hamp et al. 2013's Metastudent) ships UniProt's GO-annotated proteins
as BLAST databases; in the cellular-component one (CCO) each header reads `ACCESSION|GO:…,GO:…`. A protein
belongs to the task when exactly one of eight compartment terms is among its *own* annotations (no
ancestor propagation): 268,478 proteins, cytoplasm 51%. The eight are DeepLoc's main compartments
(Almagro Armenteros et al. 2017) that the 2014 annotations cover well.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from tabrasa.data.blastdb import BlastProteinDB
from tabrasa.data.protein_classification import HomologySplitDataModule, ProteinRecord
from tabrasa.data.sources import first_existing

COMPARTMENTS = {
    "GO:0005737": "cytoplasm",
    "GO:0005886": "plasma_membrane",
    "GO:0005576": "extracellular",
    "GO:0005634": "nucleus",
    "GO:0009507": "chloroplast",
    "GO:0005739": "mitochondrion",
    "GO:0005783": "endoplasmic_reticulum",
    "GO:0005794": "golgi_apparatus",
}
INSTALL = "apt-get install metastudent-data (225 MB download, 780 MB installed)"


def metastudent_cco(root: str | None = None) -> Path:
    """Base path of the CCO BLAST database (`…/CCO/goasp.fasta` for goasp.fasta.pin/.phr/.psq)."""
    default = os.environ.get("METASTUDENT_DATA", "/usr/share/metastudent-data")
    base = Path(root or default) / "dataset_201401" / "CCO" / "goasp.fasta"
    first_existing(
        [base.with_name(base.name + ".pin")], "metastudent-data's GO cellular-component set", INSTALL
    )
    return base


def compartment(title: str, source: str) -> str | None:
    """`ACCESSION|GO:…,GO:…` → the one compartment among its terms, or None for none or several."""
    _, bar, terms = title.partition("|")
    if not bar:
        raise ValueError(f"{source}: header {title!r} is not ACCESSION|GO:…")
    found = {COMPARTMENTS[t] for t in terms.split(",") if t in COMPARTMENTS}
    return found.pop() if len(found) == 1 else None


def localisation_records(base: Path, progress: bool = True) -> Iterator[ProteinRecord]:
    db = BlastProteinDB(base)
    for i in tqdm(range(len(db)), desc="reading UniProt CCO", unit=" proteins", disable=not progress):
        title = db.title(i)
        label = compartment(title, f"{base}.phr sequence {i}")
        if label is not None:
            yield ProteinRecord(title.partition("|")[0], db.sequence(i), label)


class UniProtLocalisationDataModule(HomologySplitDataModule):
    """268,478 single-compartment UniProt proteins in 8 classes. root: metastudent-data's folder
    (default /usr/share/metastudent-data, or $METASTUDENT_DATA). Split by homology clusters by default
    (`split: random` for the stratified random split)."""

    def __init__(self, *args: Any, root: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.root = root

    @property
    def name(self) -> str:
        return "uniprot-localisation"

    def source_settings(self) -> dict[str, Any]:
        return {"root": self.root, "compartments": sorted(COMPARTMENTS)}

    def load_records(self) -> Iterator[ProteinRecord]:
        return localisation_records(metastudent_cco(self.root))

    @classmethod
    def check_source(cls) -> str:
        return str(metastudent_cco())
