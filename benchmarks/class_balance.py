"""The majority-class share of each preset's test split, the floor its accuracy is read against.

    python -m benchmarks.class_balance configs/text/imdb.yaml configs/audio/keywords.yaml ...

Each config's data module is built exactly as `tabrasa fit` builds it (its split, seed and sizes) and its
test labels counted; results/presets/class_balance.json maps the config stem to the classes, the test
size and the majority share, which the README's preset table quotes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.evidence.cli_run import quiet_lightning
from benchmarks.evidence.majority import majority
from tabrasa.training.lightning_cli import build_cli

ROOT = Path(__file__).resolve().parents[1]


def balance(config: Path) -> dict[str, object]:
    cli = build_cli(["--config", str(config), "--trainer.logger", "false"], run=False, save_config=False)
    data = cli.datamodule
    data.prepare_data()
    data.setup("test")
    labels = data.splits["test"]["label"]
    label, share = majority(labels)
    return {
        "classes": len(data.class_names),
        "test_size": len(labels),
        "majority_class": data.class_names[label],
        "majority_share": share,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("configs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "presets" / "class_balance.json")
    args = parser.parse_args(argv)
    quiet_lightning()
    found = json.loads(args.out.read_text()) if args.out.exists() else {}
    for config in args.configs:
        found[config.stem] = balance(config)
        print(f"{config}: {found[config.stem]}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(dict(sorted(found.items())), indent=2) + "\n")


if __name__ == "__main__":
    main()
