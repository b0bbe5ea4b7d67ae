"""How optimistic a random protein split is: each protein preset trained on the random and on the
homology split (whole MMseqs2 clusters at 30% identity per split), everything else the preset's own.

    python -m benchmarks.bench_split_optimism                                    # PSORTb, both splits
    python -m benchmarks.bench_split_optimism --presets psortb uniprot_localisation
    python -m benchmarks.bench_split_optimism --threads 1                        # beside another job

Each (preset, split) is one `tabrasa fit --config configs/protein/<preset>.yaml --data.init_args.split S`
(benchmarks.run_presets: training, then the best-validation checkpoint on that split's test set), and its
run card is kept as results/homology/<preset>-<split>.json; a card already there is not trained again, so
a killed run resumes per fit. The homology run is the preset's default, so its card is also the preset's
(results/presets/<preset>.json, which the README's presets table quotes). The table (`results:
split_optimism` in the docs) is rendered from the cards by benchmarks/evidence/readme_tables.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from benchmarks.run_presets import ROOT, run

SPLITS = ("random", "homology")
DEFAULT_SPLIT = "homology"  # what the protein data modules use unless told otherwise
PRESETS = {
    "psortb": "configs/protein/psortb.yaml",
    "uniprot_localisation": "configs/protein/uniprot_localisation.yaml",
}


def card_path(results: Path, preset: str, split: str) -> Path:
    return results / "homology" / f"{preset}-{split}.json"


def fit_split(preset: str, split: str, results: Path, runs: Path) -> dict[str, object]:
    """Train one preset on one split (unless its card exists) and keep the card; returns the card."""
    path = card_path(results, preset, split)
    if path.exists():
        return json.loads(path.read_text())
    staging = Path(tempfile.mkdtemp(prefix="split-optimism-"))
    try:
        extra = ["--trainer.enable_progress_bar", "false", "--data.init_args.split", split]
        card = run(ROOT / PRESETS[preset], runs / split, staging, extra)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    text = json.dumps(card, indent=2) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if split == DEFAULT_SPLIT:
        (results / "presets" / f"{preset}.json").write_text(text)
    return card


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--presets", nargs="+", choices=sorted(PRESETS), default=["psortb"])
    parser.add_argument("--splits", nargs="+", choices=SPLITS, default=list(SPLITS))
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--threads", type=int, default=None, help="torch threads of each fit")
    args = parser.parse_args(argv)
    if args.threads is not None:  # read by torch in the child `tabrasa fit`
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    runs = Path(tempfile.mkdtemp(prefix="split-optimism-runs-"))
    try:
        for preset in args.presets:
            for split in args.splits:
                card = fit_split(preset, split, args.results, runs)
                print(f"{preset} {split}: {card.get('test')} in {card['fit_seconds']} s")
    finally:
        shutil.rmtree(runs, ignore_errors=True)


if __name__ == "__main__":
    main()
