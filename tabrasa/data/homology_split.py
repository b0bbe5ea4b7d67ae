"""Homology-aware train / validation / test splits: proteins clustered with MMseqs2, whole clusters per split.

A random split of a protein set puts close homologs on both sides, so a test protein is often a
30–90%-identical copy of a training protein and accuracy measures recall of the family, not prediction
(Rost 1999 puts the "twilight zone" of sequence alignment at 20–35% identity; DeepLoc, Almagro Armenteros
et al. 2017, partitions its localisation set at 30% identity for this reason). Here the sequences are
clustered with MMseqs2 (Steinegger & Söding 2017) and each cluster goes to exactly one split.

Clustering: `mmseqs easy-cluster --min-seq-id 0.3 -c 0.8 --cov-mode 0 --cluster-mode 1 -s 4`: two proteins
are linked when MMseqs2 aligns them at >= 30% identity over >= 80% of both sequences (cov-mode 0), at its
default sensitivity, and a cluster is a connected component of those links (cluster-mode 1, single
linkage: the guarantee homology partitioning needs, Teufel et al. 2023, GraphPart). Greedy set cover
(`cluster_mode="set-cover"`, mmseqs' default) bounds a member's similarity to its representative only; on
PSORTb it leaves 4.5× as many test proteins with a training homolog (results/homology/).
The cluster of each sequence is cached under the project cache, keyed by the sequences' hash and these
settings, so MMseqs2 runs once per data set; assigning clusters to splits is cheap and seeded.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import datasets
import numpy as np

from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.splits import Size
from tabrasa.errors import UserError
from tabrasa.io import atomic_write

SplitMethod = Literal["homology", "random"]
ClusterMode = Literal["set-cover", "connected-component"]
CLUSTER_MODES: dict[str, int] = {"set-cover": 0, "connected-component": 1}  # mmseqs --cluster-mode
INSTALL = "apt-get install mmseqs2 (or: bash scripts/setup.sh --test)"
SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class ClusterSettings:
    """identity: minimum sequence identity of a link (0.3 default, 0.5 a looser split). coverage: minimum
    aligned fraction (cov_mode 0: of both sequences; 0 = any). cluster_mode: connected components of the
    links (default) or mmseqs' greedy set cover. sensitivity: mmseqs -s."""

    identity: float = 0.3
    coverage: float = 0.8
    cov_mode: int = 0
    cluster_mode: ClusterMode = "connected-component"
    sensitivity: float = 4.0

    def __post_init__(self) -> None:
        if not 0.0 < self.identity <= 1.0:
            raise UserError(f"identity={self.identity} must be in (0, 1], e.g. 0.3 or 0.5")
        if not 0.0 <= self.coverage <= 1.0:
            raise UserError(f"coverage={self.coverage} must be in [0, 1], e.g. 0.8 (0: any coverage)")
        if self.cov_mode not in range(6):
            raise UserError(f"cov_mode={self.cov_mode} is not an mmseqs --cov-mode; choose 0 to 5")
        if self.cluster_mode not in CLUSTER_MODES:
            raise UserError(
                f"cluster_mode={self.cluster_mode!r} is not known; choose {sorted(CLUSTER_MODES)}"
            )
        if not 1.0 <= self.sensitivity <= 7.5:
            raise UserError(f"sensitivity={self.sensitivity} must be in [1, 7.5] (mmseqs -s)")

    def arguments(self) -> list[str]:
        return [
            "--min-seq-id", str(self.identity), "-c", str(self.coverage), "--cov-mode", str(self.cov_mode),
            "--cluster-mode", str(CLUSTER_MODES[self.cluster_mode]), "-s", str(self.sensitivity),
        ]  # fmt: skip


@dataclass(frozen=True)
class Clustering:
    """cluster_of[i]: the cluster (0 … n_clusters - 1) of the i-th sequence given to `cluster_sequences`."""

    cluster_of: np.ndarray
    settings: ClusterSettings
    mmseqs_version: str

    @property
    def n_clusters(self) -> int:
        return int(self.cluster_of.max()) + 1 if len(self.cluster_of) else 0


def mmseqs_binary() -> str:
    """The `mmseqs` executable on PATH, or the one-line UserError that says how to install it."""
    found = shutil.which("mmseqs")
    if found is None:
        raise UserError(f"homology splits need MMseqs2, but no `mmseqs` is on PATH; install it: {INSTALL}")
    return found


def run_mmseqs(args: Sequence[str], what: str) -> str:
    """Run `mmseqs ARGS` quietly; a failure is a UserError carrying MMseqs2's last line of output."""
    command = [mmseqs_binary(), *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise UserError(f"mmseqs {args[0]} failed while {what} (exit {done.returncode}): {last}")
    return done.stdout


def mmseqs_version() -> str:
    return run_mmseqs(["version"], "reading its version").strip()


def write_fasta(path: Path, sequences: Sequence[str], prefix: str = "s") -> None:
    """Sequence i as `>{prefix}{i}`: MMseqs2 keys its output by the first word of each header."""
    with open(path, "w") as handle:
        handle.writelines(f">{prefix}{i}\n{s}\n" for i, s in enumerate(sequences))


def threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def mmseqs_clusters(sequences: Sequence[str], settings: ClusterSettings) -> tuple[np.ndarray, str]:
    """(cluster per sequence, numbered by first appearance; mmseqs version) from one easy-cluster run."""
    version = mmseqs_version()
    with tempfile.TemporaryDirectory(prefix="tabrasa-mmseqs-") as work:
        folder = Path(work)
        write_fasta(folder / "in.fasta", sequences)
        run_mmseqs(
            ["easy-cluster", str(folder / "in.fasta"), str(folder / "out"), str(folder / "tmp"),
             *settings.arguments(), "--threads", str(threads()), "-v", "1"],
            f"clustering {len(sequences):,} sequences",
        )  # fmt: skip
        pairs = (folder / "out_cluster.tsv").read_text().split()  # representative, member, …
    representative = {int(m[1:]): int(r[1:]) for r, m in zip(pairs[0::2], pairs[1::2], strict=True)}
    if len(representative) != len(sequences):
        raise UserError(f"mmseqs clustered {len(representative)} of {len(sequences)} sequences; rerun it")
    number: dict[int, int] = {}
    cluster_of = np.array([number.setdefault(representative[i], len(number)) for i in range(len(sequences))])
    return cluster_of, version


def homologs_in(queries: Sequence[str], targets: Sequence[str], settings: ClusterSettings) -> np.ndarray:
    """(len(queries),) bool: which queries have an `mmseqs easy-search` hit among `targets` at the
    settings' identity and coverage: the leakage check of a split (test proteins with a homolog in train)."""
    with tempfile.TemporaryDirectory(prefix="tabrasa-mmseqs-") as work:
        folder = Path(work)
        write_fasta(folder / "q.fasta", queries, "q")
        write_fasta(folder / "t.fasta", targets, "t")
        search = ["--min-seq-id", str(settings.identity), "-c", str(settings.coverage),
                  "--cov-mode", str(settings.cov_mode), "-s", str(settings.sensitivity)]  # fmt: skip
        run_mmseqs(
            ["easy-search", str(folder / "q.fasta"), str(folder / "t.fasta"), str(folder / "hits.m8"),
             str(folder / "tmp"), *search, "--threads", str(threads()), "-v", "1",
             "--format-output", "query,target,fident"],
            f"searching {len(queries):,} proteins against {len(targets):,}",
        )  # fmt: skip
        lines = (folder / "hits.m8").read_text().splitlines()
    found = np.zeros(len(queries), dtype=bool)
    found[[int(line.split("\t", 1)[0][1:]) for line in lines]] = True
    return found


def cluster_sequences(
    sequences: Sequence[str], settings: ClusterSettings, cache_dir: str | Path | None = None
) -> Clustering:
    """Cluster `sequences` (cached: a second call with the same sequences and settings runs nothing).

    The cache key is the hash of the sorted unique sequences plus the settings, and MMseqs2 sees them in
    that sorted order, so the clusters do not depend on the order the caller lists the proteins in.
    """
    unique = sorted(set(sequences))
    digest = hashlib.sha256("\n".join(unique).encode()).hexdigest()
    key = settings_key({"sequences": digest, **dataclasses.asdict(settings)})
    path = cache_root(cache_dir) / "homology" / f"clusters-{key}.json"
    if path.exists():
        saved = json.loads(path.read_text())
        clusters, version = np.asarray(saved["clusters"], dtype=np.int64), str(saved["mmseqs_version"])
    else:
        clusters, version = mmseqs_clusters(unique, settings)
        record = {"mmseqs_version": version, "settings": dataclasses.asdict(settings), "sha256": digest}
        text = json.dumps({**record, "clusters": clusters.tolist()})
        atomic_write(path, lambda tmp: tmp.write_text(text))
    position = {s: i for i, s in enumerate(unique)}
    return Clustering(clusters[[position[s] for s in sequences]], settings, version)


def as_fractions(val_size: Size, test_size: Size, total: int) -> dict[str, float]:
    """Target fraction of rows per split, from counts (>= 1) or fractions (< 1) as `splits.holdout` takes."""
    fractions = {}
    for split, size in (("validation", val_size), ("test", test_size)):
        if size <= 0 or (isinstance(size, float) and size >= 1):
            raise UserError(f"{split} size={size} must be a count >= 1 or a fraction in (0, 1)")
        fractions[split] = size / total if size >= 1 else float(size)
    fractions["train"] = 1.0 - fractions["validation"] - fractions["test"]
    if fractions["train"] <= 0:
        raise UserError(
            f"val_size={val_size} and test_size={test_size} leave none of {total} rows to train on"
        )
    return fractions


def assign_clusters(cluster_of: np.ndarray, fractions: Mapping[str, float], seed: int) -> np.ndarray:
    """Split index (into SPLITS) per row, whole clusters at a time, as close to `fractions` as they allow.

    Clusters come in a seeded random order; each goes to the split furthest below its target that still
    has room for all of it, or, when none has, to the one furthest below: a greedy fill, so large clusters
    can leave a split off its target (the record reports the fractions reached).
    """
    sizes = np.bincount(cluster_of)
    deficit = np.array([fractions[s] for s in SPLITS]) * len(cluster_of)
    split_of_cluster = np.empty(len(sizes), dtype=np.int64)
    for cluster in np.random.default_rng(seed).permutation(len(sizes)):
        fits = deficit >= sizes[cluster]
        choice = int(np.argmax(np.where(fits, deficit, -np.inf))) if fits.any() else int(np.argmax(deficit))
        split_of_cluster[cluster] = choice
        deficit[choice] -= sizes[cluster]
    return split_of_cluster[cluster_of]


def homology_train_val_test(
    rows: datasets.Dataset,
    val_size: Size,
    test_size: Size,
    seed: int,
    settings: ClusterSettings,
    cache_dir: str | Path | None = None,
) -> tuple[datasets.DatasetDict, dict[str, Any]]:
    """Deduplicated rows with a `sequence` column → (train / validation / test disjoint by cluster, the
    split's record: settings, mmseqs version, number of clusters, target and achieved fractions)."""
    clustering = cluster_sequences(rows["sequence"], settings, cache_dir)
    fractions = as_fractions(val_size, test_size, len(rows))
    split_of = assign_clusters(clustering.cluster_of, fractions, seed)
    counts = np.bincount(split_of, minlength=len(SPLITS))
    empty = [s for s, n in zip(SPLITS, counts, strict=True) if n == 0]
    if empty:
        raise UserError(
            f"{clustering.n_clusters} homology clusters of {len(rows)} proteins leave {empty} empty; use "
            f"more proteins, a higher identity, or split: random"
        )
    splits = datasets.DatasetDict(
        {s: rows.select(np.flatnonzero(split_of == i)) for i, s in enumerate(SPLITS)}
    )
    record = {
        "method": "homology",
        "tool": "mmseqs easy-cluster",
        "mmseqs_version": clustering.mmseqs_version,
        **dataclasses.asdict(settings),
        "n_clusters": clustering.n_clusters,
        "seed": seed,
        "target_fractions": {s: round(fractions[s], 4) for s in SPLITS},
        "achieved_fractions": {s: round(int(n) / len(rows), 4) for s, n in zip(SPLITS, counts, strict=True)},
    }
    return splits, record
