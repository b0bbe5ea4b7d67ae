"""Every unique UniProt protein of `metastudent-data` (the CCO, MFO and BPO BLAST databases: about 228k
sequences), without GO labels, minus every sequence PSORTb ships (all three organism sets, so no PSORTb
test protein is pretrained on) and minus the validation and test proteins of any `exclude` data module
(e.g. UniProtLocalisationDataModule, whose proteins come from the same databases)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import datasets
from pytorch_lightning.utilities import rank_zero_info

from tabrasa.data.blastdb import BlastProteinDB
from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.fasta import read_fasta
from tabrasa.data.psortb import SCLBLAST, psortb_roots
from tabrasa.data.uniprot_localisation import metastudent_cco
from tabrasa.data.unlabelled.base import ListInputs, UnlabelledDataModule
from tabrasa.data.unlabelled.exclusion import held_out_values
from tabrasa.io import atomic_write
from tabrasa.tokenizers.protein import clean_sequence

ONTOLOGIES = ("CCO", "MFO", "BPO")


def psortb_sequences(cache_dir: str | None = None) -> set[str]:
    """Every cleaned sequence of every installed PSORTb reference set (empty where none is installed)."""
    found: set[str] = set()
    for root in psortb_roots(cache_dir):
        for organism in ("gramneg", "grampos", "archaea"):
            path = root / SCLBLAST / organism / "sclblast"
            if path.exists():
                found.update(clean_sequence(s, f"{path} {h}") for h, s in read_fasta(path))
    return found


def uniprot_sequences(root: str | None, pool: int | None) -> list[str]:
    """Unique cleaned sequences in database order (CCO, MFO, BPO); the first `pool` records with a limit."""
    seen: dict[str, None] = {}
    for ontology in ONTOLOGIES:
        base = metastudent_cco(root).parent.parent / ontology / "goasp.fasta"
        db = BlastProteinDB(base)
        for i in itertools.islice(range(len(db)), pool):
            seen.setdefault(clean_sequence(db.sequence(i), f"{base} #{i}"), None)
    return list(seen)


def held_out_key(module: TabrasaDataModule) -> str | None:
    """The name of a labelled module's split cache (a hash of its split settings), where it has one."""
    path = getattr(module, "cache_path", None)
    return path.name if isinstance(path, Path) else None


class UnlabelledUniProt(UnlabelledDataModule):
    """root: metastudent-data's folder (default /usr/share/metastudent-data). exclude: labelled data modules
    whose validation and test proteins are left out. Long proteins are cut by the tokenizer's truncation,
    as in the labelled sets."""

    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.esm.EsmProteinTokenizer, "
        "init_args: {max_length: 256, truncation: head_tail, unknown: x}}"
    )

    def __init__(
        self, root: str | None = None, exclude: list[TabrasaDataModule] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.root = root
        self.exclude = exclude or []

    @property
    def cache_path(self) -> Path:
        # The held-out proteins depend on each module's split settings (seed, sizes, random or homology):
        # its own cache folder's name is their hash.
        excluded = [f"{type(m).__name__}:{getattr(m, 'seed', None)}:{held_out_key(m)}" for m in self.exclude]
        key = settings_key({"root": self.root, "limit": self.limit, "exclude": excluded})
        return cache_root(self.cache_dir) / "unlabelled" / f"uniprot-{key}"

    def load_inputs(self) -> ListInputs:
        path = self.cache_path
        if not path.exists():
            pool = None if self.limit is None else 2 * self.limit
            sequences = uniprot_sequences(self.root, pool)
            banned = psortb_sequences(self.cache_dir) | {
                clean_sequence(s)
                for s in held_out_values((m.load_splits() for m in self.exclude), "sequence")
            }
            kept = [s for s in sequences if s not in banned]
            rank_zero_info(
                f"[uniprot] {len(kept):,} unique sequences ({len(sequences) - len(kept):,} left out: in "
                f"PSORTb or a held-out split)"
            )
            table = datasets.Dataset.from_dict({"sequence": kept})
            atomic_write(path, lambda tmp: table.save_to_disk(str(tmp)))
        return ListInputs(datasets.load_from_disk(str(path))["sequence"])
