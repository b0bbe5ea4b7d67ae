"""Train shipped presets one after another and keep each run's card under results/presets/.

    python -m benchmarks.run_presets configs/text/imdb.yaml configs/image/fashion_mnist.yaml ...

Each preset runs as `tabrasa fit --config <config>` (training, then testing the best checkpoint) with its
run folder under --runs (default: a folder outside the checkout); the run card `tabrasa fit` writes
(config, git commit, versions, hardware and load, split sizes, wall time, tested checkpoint, test metrics)
is copied to results/presets/<config stem>.json, which the README's tables quote.

A preset longer than one sitting runs in segments: keep its run folder and let each segment resume the last:

    python -m benchmarks.run_presets configs/image/fashion_mnist_mamba.yaml --runs ~/.cache/tabrasa/presets \
        --extra --ckpt_path last          # the same command again after a kill

The first segment finds no last.ckpt and starts fresh; each later one resumes exactly (docs/robustness.md).
The card's fit_seconds is then the whole run's: every segment's training up to the checkpoint the next one
resumed from (`segments` in the card says how many and from where).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def newest_card(save_dir: Path) -> Path:
    cards = sorted(save_dir.rglob("run_card.json"), key=lambda p: p.stat().st_mtime)
    if not cards:
        raise SystemExit(f"no run_card.json under {save_dir}: the run failed before it finished")
    return cards[-1]


def run(config: Path, runs: Path, out: Path, extra: list[str]) -> dict[str, object]:
    save_dir = runs / config.stem
    command = ["tabrasa", "fit", "--config", str(config.relative_to(ROOT)), *extra]
    args = [*command[1:], "--trainer.logger.init_args.save_dir", str(save_dir)]
    done = subprocess.run([sys.executable, "-m", "tabrasa.cli", *args], cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with status {done.returncode}")
    card = json.loads(newest_card(save_dir).read_text())
    card["command"] = command  # as a user types it (the run folder is this script's choice)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{config.stem}.json").write_text(json.dumps(card, indent=2) + "\n")
    return card


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("configs", type=Path, nargs="+")
    parser.add_argument(
        "--runs",
        type=Path,
        default=None,
        help="keep the run folders here (default: a temporary folder, removed)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "presets")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="overrides for every run")
    args = parser.parse_args(argv)
    # A folder the user names is theirs (its checkpoints may be a teacher or a base to fine-tune): only
    # the default temporary one is removed.
    runs = args.runs or Path(tempfile.mkdtemp(prefix="tabrasa-presets-"))
    try:
        for config in args.configs:
            card = run(config.resolve(), runs, args.out, args.extra)
            print(f"{config}: {card.get('test', 'no test split')} in {card['fit_seconds']} s")
    finally:
        if args.runs is None:
            shutil.rmtree(runs, ignore_errors=True)


if __name__ == "__main__":
    main()
