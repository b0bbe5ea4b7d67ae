"""Homology-aware splits: MMseqs2 clusters of a synthetic family set never straddle train / validation /
test, seeds reproduce, the clustering is cached, a missing binary is one line, and a random split of the
same set (the counter-test) does put family members on both sides."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import datasets
import numpy as np
import pytest

import tabrasa.data.homology_split as homology_split
from tabrasa.cli.data import data_module_from
from tabrasa.data.homology_split import (
    SPLITS,
    ClusterSettings,
    as_fractions,
    assign_clusters,
    cluster_sequences,
    homologs_in,
    homology_train_val_test,
)
from tabrasa.data.protein_classification import ProteinClassificationDataModule, ProteinRecord
from tabrasa.data.psortb import PSORTbDataModule
from tabrasa.data.splits import train_val_test
from tabrasa.data.uniprot_localisation import UniProtLocalisationDataModule
from tabrasa.errors import UserError
from tabrasa.tokenizers.protein import ProteinTokenizer
from tabrasa.training.run_card import split_records
from tests.availability import needs, skip_unless_available

AMINO = "ACDEFGHIKLMNPQRSTVWY"
FAMILIES, MEMBERS, LENGTH = 6, 8, 120
MMSEQS = "the MMseqs2 binary: apt-get install mmseqs2"
needs_mmseqs = needs(shutil.which("mmseqs") is not None, MMSEQS)


def family_set(seed: int = 0, mutate: float = 0.2) -> tuple[list[str], np.ndarray]:
    """FAMILIES random roots, MEMBERS point-mutated copies of each (same length, no gaps)."""
    rng = np.random.default_rng(seed)
    sequences, family = [], []
    for f in range(FAMILIES):
        root = rng.integers(0, 20, LENGTH)
        for _ in range(MEMBERS):
            copy = np.where(rng.random(LENGTH) < mutate, rng.integers(0, 20, LENGTH), root)
            sequences.append("".join(AMINO[i] for i in copy))
            family.append(f)
    return sequences, np.array(family)


def identity(a: str, b: str) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def table(sequences: list[str], family: np.ndarray) -> datasets.Dataset:
    return datasets.Dataset.from_dict(
        {"sequence": sequences, "family": family.tolist(), "label": (family % 2).tolist()},
        features=datasets.Features(
            {"sequence": datasets.Value("string"), "family": datasets.Value("int64"),
             "label": datasets.ClassLabel(names=["even", "odd"])}
        ),
    )  # fmt: skip


def families_per_split(splits: datasets.DatasetDict) -> dict[str, set[int]]:
    return {split: set(splits[split]["family"]) for split in SPLITS}


def straddling(splits: datasets.DatasetDict) -> set[int]:
    seen = families_per_split(splits)
    return {f for f in range(FAMILIES) if sum(f in seen[s] for s in SPLITS) > 1}


def test_the_family_set_is_what_the_tests_claim() -> None:
    sequences, family = family_set()
    pairs = [(i, j) for i in range(len(sequences)) for j in range(i)]
    within = [identity(sequences[i], sequences[j]) for i, j in pairs if family[i] == family[j]]
    across = [identity(sequences[i], sequences[j]) for i, j in pairs if family[i] != family[j]]
    assert min(within) > 0.5 and max(across) < 0.2


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("homology-cache")


@pytest.fixture(scope="module")
def clustered(cache: Path) -> homology_split.Clustering:
    """One MMseqs2 run (a few seconds) that the other tests reuse through the cache."""
    skip_unless_available(shutil.which("mmseqs") is not None, MMSEQS)
    return cluster_sequences(family_set()[0], ClusterSettings(), cache)


@pytest.mark.slow
@needs_mmseqs
def test_mmseqs_clusters_are_the_families(clustered: homology_split.Clustering) -> None:
    _, family = family_set()
    assert clustered.n_clusters == FAMILIES
    assert len({(f, c) for f, c in zip(family, clustered.cluster_of, strict=True)}) == FAMILIES
    assert clustered.mmseqs_version and clustered.settings.identity == 0.3


@pytest.mark.slow
@needs_mmseqs
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_homology_split_never_puts_a_family_on_two_sides(
    clustered: homology_split.Clustering, cache: Path, seed: int
) -> None:
    sequences, family = family_set()
    splits, record = homology_train_val_test(table(sequences, family), 8, 8, seed, ClusterSettings(), cache)
    assert not straddling(splits)
    assert all(len(splits[s]) for s in SPLITS)
    assert record["n_clusters"] == FAMILIES and record["identity"] == 0.3 and record["coverage"] == 0.8
    assert record["cov_mode"] == 0 and record["mmseqs_version"] == clustered.mmseqs_version
    reached = {s: len(splits[s]) / len(sequences) for s in SPLITS}
    assert record["achieved_fractions"] == pytest.approx(reached, abs=1e-4)
    again, _ = homology_train_val_test(table(sequences, family), 8, 8, seed, ClusterSettings(), cache)
    assert families_per_split(again) == families_per_split(splits)  # the seed reproduces the split


def test_counter_a_random_split_puts_family_members_on_both_sides() -> None:
    sequences, family = family_set()
    for seed in (0, 1, 2):
        assert straddling(train_val_test(table(sequences, family), 8, 8, seed, "families"))


@pytest.mark.slow
@needs_mmseqs
def test_no_test_protein_has_a_homolog_in_train_unless_split_at_random(
    clustered: homology_split.Clustering, cache: Path
) -> None:
    sequences, family = family_set()
    homology, _ = homology_train_val_test(table(sequences, family), 8, 8, 0, ClusterSettings(), cache)
    random = train_val_test(table(sequences, family), 8, 8, 0, "families")
    found = {
        name: int(homologs_in(s["test"]["sequence"], s["train"]["sequence"], ClusterSettings()).sum())
        for name, s in (("homology", homology), ("random", random))
    }
    assert found["homology"] == 0
    assert found["random"] >= len(random["test"]) // 2  # held out at random, most members keep kin in train


@pytest.mark.slow
@needs_mmseqs
def test_a_cache_hit_runs_no_mmseqs(
    clustered: homology_split.Clustering, cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[int] = []
    run = homology_split.mmseqs_clusters

    def counting(sequences: list[str], settings: ClusterSettings) -> tuple[np.ndarray, str]:
        calls.append(len(sequences))
        return run(sequences, settings)

    monkeypatch.setattr(homology_split, "mmseqs_clusters", counting)
    monkeypatch.setenv("PATH", str(tmp_path))  # no binary either: a hit must not need one
    sequences, _ = family_set()
    order = np.random.default_rng(3).permutation(len(sequences))
    again = cluster_sequences([sequences[i] for i in order], ClusterSettings(), cache)
    assert calls == []
    assert again.mmseqs_version == clustered.mmseqs_version
    pairs = {(a, b) for a, b in zip(again.cluster_of, clustered.cluster_of[order], strict=True)}
    assert len(pairs) == FAMILIES  # the same partition, whatever order the proteins came in
    with pytest.raises(UserError, match="no `mmseqs` is on PATH"):  # other settings: a miss, run
        cluster_sequences(sequences, ClusterSettings(identity=0.5), cache)
    assert calls == [len(sequences)]


def test_a_missing_binary_is_one_line_naming_the_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as error:
        cluster_sequences(["MKV", "MKW"], ClusterSettings(), tmp_path)
    message = str(error.value)
    assert "\n" not in message
    assert "apt-get install mmseqs2" in message and "bash scripts/setup.sh --test" in message


def test_seeds_reproduce_and_differ() -> None:
    clusters = np.random.default_rng(0).integers(0, 200, 1000)
    fractions = {"train": 0.8, "validation": 0.1, "test": 0.1}
    first = assign_clusters(clusters, fractions, seed=0)
    assert np.array_equal(first, assign_clusters(clusters, fractions, seed=0))
    assert not np.array_equal(first, assign_clusters(clusters, fractions, seed=1))
    for cluster in np.unique(clusters):
        assert len(set(first[clusters == cluster])) == 1


def test_fractions_are_met_as_closely_as_clusters_allow() -> None:
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(2000), rng.integers(1, 6, 2000))
    fractions = {"train": 0.8, "validation": 0.1, "test": 0.1}
    split = assign_clusters(clusters, fractions, seed=0)
    achieved = np.bincount(split, minlength=3) / len(split)
    assert np.allclose(achieved, [0.8, 0.1, 0.1], atol=0.005), achieved
    giant = np.concatenate([np.zeros(600, dtype=int), np.arange(1, 401)])  # one cluster of 60%
    split = assign_clusters(giant, fractions, seed=0)
    assert set(split[:600]) == {0}  # only train has room for it; the rest still fill validation and test
    assert abs(np.mean(split == 1) - 0.1) < 0.01 and abs(np.mean(split == 2) - 0.1) < 0.01


def test_sizes_become_fractions_of_all_rows() -> None:
    assert as_fractions(100, 0.2, 1000) == pytest.approx({"validation": 0.1, "test": 0.2, "train": 0.7})
    with pytest.raises(UserError, match="leave none"):
        as_fractions(0.5, 0.5, 10)


@pytest.mark.parametrize(
    "bad",
    [{"identity": 0.0}, {"coverage": 1.5}, {"cov_mode": 7}, {"cluster_mode": "single"}, {"sensitivity": 9.0}],
)
def test_bad_settings_say_which(bad: dict[str, object]) -> None:
    with pytest.raises(UserError, match=next(iter(bad))):
        ClusterSettings(**bad)  # type: ignore[arg-type]


class Families(ProteinClassificationDataModule):
    @property
    def name(self) -> str:
        return "families"

    def load_records(self) -> Iterator[ProteinRecord]:
        sequences, family = family_set()
        for i, (sequence, f) in enumerate(zip(sequences, family, strict=True)):
            yield ProteinRecord(f"f{f}-{i}", sequence, "ab"[f % 2])


@pytest.mark.slow
@needs_mmseqs
def test_the_data_module_splits_by_homology_and_records_how(tmp_path: Path) -> None:
    data = Families(
        tokenizer=ProteinTokenizer(unknown="x"), split="homology", identity=0.5, val_size=8, test_size=8,
        cache_dir=str(tmp_path),
    )  # fmt: skip
    splits = data.splits
    kin = {s: {row.split("-")[0] for row in splits[s]["id"]} for s in SPLITS}
    assert not (kin["train"] & kin["test"]) and not (kin["train"] & kin["validation"])
    record = data.split_record
    assert record["method"] == "homology" and record["identity"] == 0.5 and record["n_clusters"] == FAMILIES
    assert split_records(data) == record  # what the run card's data.split holds
    random = Families(
        tokenizer=ProteinTokenizer(unknown="x"),
        split="random",
        val_size=8,
        test_size=8,
        cache_dir=str(tmp_path),
    )
    assert random.cache_path != data.cache_path and random.split_record["method"] == "random"


def test_psortb_and_uniprot_default_to_homology_and_a_flag_restores_random() -> None:
    residues = ProteinTokenizer(unknown="x")
    psortb, uniprot = PSORTbDataModule(tokenizer=residues), UniProtLocalisationDataModule(tokenizer=residues)
    assert psortb.split == "homology" and uniprot.split == "homology"
    assert psortb.cluster_settings == ClusterSettings(identity=0.3)
    restored = data_module_from("psortb", None, ["split=random"])
    assert restored.split == "random" and restored.cluster_settings is None  # type: ignore[attr-defined]
    looser = data_module_from("uniprot_localisation", None, ["identity=0.5"])
    assert looser.cluster_settings == ClusterSettings(identity=0.5)  # type: ignore[attr-defined]
    with pytest.raises(UserError, match="split='families' is not known"):
        PSORTbDataModule(tokenizer=residues, split="families")  # type: ignore[arg-type]
