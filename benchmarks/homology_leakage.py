"""How many PSORTb test proteins have a homolog in training, under the random and the homology splits.

Each split is the one `PSORTbDataModule` trains on (deduplicated, seeded); every test protein is then
searched against the training proteins with `mmseqs easy-search` at sensitivity 7.5 (more sensitive than
the clustering's 4), and counted when a hit reaches 30% identity, over 80% of both sequences (the
clustering's own criterion) and at any coverage (a looser, local-homology criterion).

    python -m benchmarks.homology_leakage     # gramneg; ~30 min on 2 busy cores, clusterings cached after
    python -m benchmarks.homology_leakage --out results/homology
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import datasets

from tabrasa.data.homology_split import ClusterSettings, homologs_in, homology_train_val_test
from tabrasa.data.psortb import PSORTbDataModule
from tabrasa.tokenizers.protein import ProteinTokenizer

# (name, split, identity, cluster mode): the modules' default (connected components at 30%), its looser
# option (50%), and mmseqs' greedy set cover at both.
ARMS = (
    ("random", "random", 0.3, "set-cover"),
    ("homology-0.3", "homology", 0.3, "connected-component"),
    ("homology-0.5", "homology", 0.5, "connected-component"),
    ("homology-0.3-set-cover", "homology", 0.3, "set-cover"),
    ("homology-0.5-set-cover", "homology", 0.5, "set-cover"),
)
CHECKS = {
    "hit_30pct_cov80": ClusterSettings(identity=0.3, coverage=0.8, sensitivity=7.5),
    "hit_30pct_any_cov": ClusterSettings(identity=0.3, coverage=0.0, sensitivity=7.5),
}


def arm_splits(
    table: datasets.Dataset, data: PSORTbDataModule, split: str, identity: float, mode: str
) -> tuple[datasets.DatasetDict, dict[str, Any]]:
    if split == "random":
        return data.split_table(table)
    settings = ClusterSettings(identity=identity, cluster_mode=mode)  # type: ignore[arg-type]
    return homology_train_val_test(table, data.val_size, data.test_size, data.seed, settings, data.cache_dir)


def measure(organism: str, cache_dir: str | None) -> list[dict[str, Any]]:
    # Only the labelled table and its splits are measured; the tokenizer is the preset's, never used.
    residues = ProteinTokenizer(max_length=256, truncation="head_tail", unknown="x")
    data = PSORTbDataModule(tokenizer=residues, organism=organism, split="random", cache_dir=cache_dir)  # type: ignore[arg-type]
    table = data.labelled_table()
    rows = []
    for name, split, identity, mode in ARMS:
        started = time.perf_counter()
        splits, record = arm_splits(table, data, split, identity, mode)
        split_seconds = time.perf_counter() - started
        test, train = splits["test"]["sequence"], splits["train"]["sequence"]
        sizes = {s: len(part) for s, part in splits.items()}
        row: dict[str, Any] = {"arm": name, **sizes, **record}
        for check, settings in CHECKS.items():
            hits = int(homologs_in(test, train, settings).sum())
            row[check] = hits
            row[f"{check}_share"] = round(hits / len(test), 4)
        row["split_seconds"] = round(split_seconds, 1)
        rows.append(row)
        print(f"{name:<24} test {len(test):>5}  ≥30%/cov80 {row['hit_30pct_cov80']:>5}  "
              f"≥30%/any {row['hit_30pct_any_cov']:>5}  ({split_seconds:.0f} s to split)")  # fmt: skip
    return rows


def achieved(row: dict[str, Any]) -> dict[str, float]:
    total = row["train"] + row["validation"] + row["test"]
    return {s: row[s] / total for s in ("train", "validation", "test")}


def markdown(rows: list[dict[str, Any]], organism: str) -> str:
    lines = [
        f"# PSORTb {organism}: test proteins with a ≥30%-identity homolog in train",
        "",
        "| split | clusters | train / val / test fractions | test | hit ≥30%, cov ≥80% | hit ≥30%, any cov |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        fractions = r["achieved_fractions"] if "achieved_fractions" in r else achieved(r)
        shown = " / ".join(f"{fractions[s]:.3f}" for s in ("train", "validation", "test"))
        lines.append(
            f"| {r['arm']} | {r.get('n_clusters', '—')} | {shown} | {r['test']} | "
            f"{r['hit_30pct_cov80']} ({r['hit_30pct_cov80_share']:.1%}) | "
            f"{r['hit_30pct_any_cov']} ({r['hit_30pct_any_cov_share']:.1%}) |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--organism", default="gramneg", choices=["gramneg", "grampos", "archaea"])
    parser.add_argument("--cache-dir", default=None, help="tabrasa's cache (default $TABRASA_CACHE)")
    parser.add_argument("--out", default="results/homology")
    args = parser.parse_args(argv)
    rows = measure(args.organism, args.cache_dir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"psortb_{args.organism}.json").write_text(json.dumps(rows, indent=2) + "\n")
    (out / f"psortb_{args.organism}.md").write_text(markdown(rows, args.organism))
    print(f"wrote {out}/psortb_{args.organism}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
