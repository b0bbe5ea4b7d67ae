"""PSORTb: header parsing, deduplication before splitting, the install message, and the real set."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabrasa.data.loader import LoaderConfig
from tabrasa.data.protein_classification import ProteinRecord, deduplicate
from tabrasa.data.psortb import PSORTbDataModule, psortb_records, sclblast_path
from tabrasa.data.sources import DataSourceMissingError
from tabrasa.tokenizers.protein import CLS_ID, EOS_ID, ProteinTokenizer
from tests.availability import needs


def residues() -> ProteinTokenizer:
    return ProteinTokenizer(max_length=512, truncation="head_tail", unknown="x")


CLASSES = ["Cytoplasmic", "CytoplasmicMembrane", "Periplasmic", "OuterMembrane", "Extracellular"]
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def write_fake_psortb(root: Path, per_class: int = 12) -> Path:
    """A small sclblast file in PSORTb's format: unique sequences, one duplicate, one conflict, one dual."""
    path = root / "conf/analysis/sclblast/gramneg/sclblast"
    path.parent.mkdir(parents=True)
    lines = []
    for c, label in enumerate(CLASSES):
        for i in range(per_class):
            seq = "M" + "".join(AMINO[(c * 7 + i * j) % 20] for j in range(20 + 3 * i)) + AMINO[c] * (i + 1)
            lines += [f">{c}{i:03d} [{label}] [sub] protein {i}", seq[:30], seq[30:]]
    lines += [">dup [Cytoplasmic] copy", lines[1] + lines[2]]  # duplicate of the first, same label
    lines += [">c1 [Cytoplasmic]", "MKKKKKKKKKK", ">c2 [Periplasmic]", "MKKKKKKKKKK"]  # conflicting labels
    lines += [">dual [OuterMembrane,Extracellular] x", "MWWWWWWWWW"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def fake_psortb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PSORTB_ROOT", str(tmp_path / "psort"))
    return write_fake_psortb(tmp_path / "psort")


def test_records_skip_dual_localisations(fake_psortb: Path) -> None:
    records = list(psortb_records(fake_psortb))
    assert len(records) == 5 * 12 + 3
    assert records[0].id == "0000" and records[0].label == "Cytoplasmic" and "\n" not in records[0].sequence
    assert "dual" not in {r.id for r in records}


def test_deduplicate_merges_copies_and_drops_conflicts() -> None:
    pairs = [("MKV", "x"), ("mk v", "x"), ("MAA", "x"), ("MAA", "y"), ("MW*", "y")]
    records = [ProteinRecord(name, seq, label) for name, (seq, label) in zip("abcde", pairs, strict=True)]
    kept, dropped = deduplicate(records)
    assert [(r.id, r.sequence) for r in kept] == [("a", "MKV"), ("e", "MW")]
    assert dropped == {"duplicate": 2, "conflict": 1}


def test_splits_are_disjoint_stratified_and_cached(fake_psortb: Path, tmp_path: Path) -> None:
    data = PSORTbDataModule(
        tokenizer=residues(),
        val_size=10,
        test_size=10,
        cache_dir=str(tmp_path / "cache"),
        loader=LoaderConfig(batch_size=4),
        split="random",  # the stratified split; homology splits are tests/data/test_homology_split.py's
    )
    splits = data.splits
    assert list(data.class_names) == sorted(CLASSES) and data.num_outputs == 5
    sequences = [set(splits[s]["sequence"]) for s in ("train", "validation", "test")]
    assert sum(len(s) for s in sequences) == len(set().union(*sequences)) == 5 * 12
    assert sorted(splits["test"]["label"]) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]  # stratified
    assert any((tmp_path / "cache" / "psortb-gramneg").glob("splits-*"))
    batch = next(iter(data.train_dataloader()))
    assert batch["input_ids"][:, 0].eq(CLS_ID).all() and batch["label"].shape == (4,)
    lengths = batch["attention_mask"].sum(1)
    assert batch["input_ids"][0, lengths[0] - 1] == EOS_ID


def test_random_crop_keeps_max_length_and_changes_per_draw(fake_psortb: Path, tmp_path: Path) -> None:
    tokenizer = ProteinTokenizer(max_length=12, truncation="head")
    data = PSORTbDataModule(
        tokenizer=tokenizer,
        train_crop="random",
        val_size=10,
        test_size=10,
        cache_dir=str(tmp_path),
        split="random",
    )
    row = max(data.splits["train"], key=lambda r: r["length"])
    crops = {tuple(tokenizer(data.raw_input(row, "train"))["input_ids"].tolist()) for _ in range(10)}
    assert len(crops) > 1 and all(len(c) == 12 for c in crops)
    assert len({tuple(tokenizer(data.raw_input(row, "test"))["input_ids"].tolist()) for _ in range(3)}) == 1


def test_missing_files_name_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PSORTB_ROOT", str(tmp_path / "nowhere"))
    with pytest.raises(DataSourceMissingError, match=r"apt-get download psortb && dpkg -x psortb_\*\.deb"):
        sclblast_path(cache_dir=str(tmp_path))


def test_extracted_copy_in_the_cache_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PSORTB_ROOT", str(tmp_path / "nowhere"))
    path = write_fake_psortb(tmp_path / "cache" / "debian" / "psortb" / "usr" / "lib" / "psort")
    assert sclblast_path(cache_dir=str(tmp_path / "cache")) == path


REAL = Path("/usr/lib/psort/conf/analysis/sclblast/gramneg/sclblast")


@needs(REAL.exists(), "the PSORTb files: apt-get download psortb && dpkg -x psortb_*.deb /")
def test_real_gram_negative_set(tmp_path: Path) -> None:
    data = PSORTbDataModule(tokenizer=residues(), cache_dir=str(tmp_path), split="random")
    splits = data.splits
    assert sum(len(s) for s in splits.values()) == 11_189  # 11,206 single-label, 16 copies, 1 conflict
    assert len(splits["test"]) == 1_119
    majority = splits["test"]["label"].count(data.class_names.index("Cytoplasmic")) / len(splits["test"])
    assert 0.68 < majority < 0.70
