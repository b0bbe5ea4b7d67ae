"""`tabrasa data list` and `tabrasa data prepare`: build and cache a dataset before training.

    tabrasa data list                                    registered datasets and whether their files are here
    tabrasa data prepare psortb                          with the data module's defaults
    tabrasa data prepare --config configs/protein/psortb.yaml   exactly the splits that config trains on
    tabrasa data prepare --config configs/user/fasta.yaml --set path=my.fasta   a data-only file too
    tabrasa data prepare fashion_mnist --set val_size=5000 --set seed=1

Caches go to $TABRASA_CACHE (default ~/.cache/tabrasa). A missing source stops with the package to install.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import yaml
from jsonargparse import ArgumentParser

from tabrasa.data.cache import cache_root
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.registry import DATASETS
from tabrasa.data.sources import DataSourceMissingError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tabrasa data", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="registered datasets and whether their raw files are installed")
    prepare = commands.add_parser("prepare", help="build and cache a dataset's splits")
    prepare.add_argument("name", nargs="?", choices=sorted(DATASETS), help="a registered dataset")
    prepare.add_argument("--config", help="a tabrasa YAML config; its data section is prepared")
    prepare.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override a data setting"
    )
    return parser


def data_module_from(name: str | None, config: str | None, overrides: list[str]) -> TabrasaDataModule:
    """Instantiate the data module through jsonargparse, exactly as `tabrasa fit` would."""
    if (name is None) == (config is None):
        raise SystemExit("tabrasa data prepare: give a dataset NAME or --config FILE (one of them)")
    if config is not None:
        loaded = yaml.safe_load(Path(config).read_text()) or {}
        section = loaded if "class_path" in loaded else loaded.get("data")  # a data file or a whole config
        if not isinstance(section, dict) or "class_path" not in section:
            raise SystemExit(f"{config} has neither a data: section nor a top-level class_path")
    else:
        cls = DATASETS[name]  # type: ignore[index]
        section = {"class_path": f"{cls.__module__}.{cls.__qualname__}", "init_args": {}}
    init_args = dict(section.get("init_args") or {})
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set {item!r}: expected KEY=VALUE")
        *parents, leaf = key.split(".")  # loader.batch_size=16 → {"loader": {"batch_size": 16}}
        section_args = init_args
        for parent in parents:
            section_args = section_args.setdefault(parent, {})
        section_args[leaf] = yaml.safe_load(value)
    parser = ArgumentParser(exit_on_error=False)
    parser.add_subclass_arguments(TabrasaDataModule, "data", required=True)
    parsed = parser.parse_object({"data": {"class_path": section["class_path"], "init_args": init_args}})
    return parser.instantiate_classes(parsed).data


def summary(data: TabrasaDataModule) -> str:
    names = data.class_names
    lines = []
    for split, rows in data.splits.items():
        counts = Counter(rows["label"]) if "label" in rows.column_names else Counter()
        top = ", ".join(f"{names[k] if names else k}: {v:,}" for k, v in counts.most_common(3))
        majority = max(counts.values()) / len(rows) if counts else 0.0
        lines.append(f"  {split:<10} {len(rows):>9,} rows  majority class {majority:.1%}  ({top}, …)")
    return "\n".join(lines)


def list_datasets() -> int:
    for name, cls in DATASETS.items():
        check = getattr(cls, "check_source", None)
        try:
            status = f"ready ({check()})" if check else "built from an installed package"
        except DataSourceMissingError as missing:
            status = "MISSING: " + str(missing).splitlines()[-1]
        print(f"{name:<22} {cls.__name__:<32} {status}")
    print(f"cache: {cache_root()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "list":
        return list_datasets()
    try:
        data = data_module_from(args.name, args.config, args.set)
        data.prepare_data()
        data.setup("fit")
    except DataSourceMissingError as missing:
        print(f"tabrasa data prepare: {missing}", file=sys.stderr)
        return 2
    label = args.name or args.config
    where = cache_root(getattr(data, "cache_dir", None))
    print(f"{label}: {type(data).__name__}, {data.num_outputs} classes, cached under {where}")
    print(summary(data))
    return 0
