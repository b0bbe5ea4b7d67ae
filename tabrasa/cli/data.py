"""`tabrasa data list` and `tabrasa data prepare`: build and cache a dataset before training.

    tabrasa data list                                    registered datasets and whether their files are here
    tabrasa data prepare psortb                          the data section of its preset (tokenizer included)
    tabrasa data prepare --config configs/protein/psortb.yaml   exactly the splits that config trains on
    tabrasa data prepare --config configs/user/fasta.yaml --set path=my.fasta   a data-only file too
    tabrasa data prepare fashion_mnist --set val_size=5000 --set seed=1
    tabrasa data prepare --config configs/pretrain/protein.yaml --streaming corpora/uniprot
                                                         also encode every split into a streaming corpus
                                                         (litdata chunks; tabrasa.data.streaming reads it)

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
from tabrasa.data.unlabelled.base import UnlabelledDataModule
from tabrasa.errors import UserError


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
    prepare.add_argument(
        "--streaming", metavar="OUT", help="also write the splits as a streaming corpus in OUT"
    )
    prepare.add_argument("--chunk-bytes", default="16MB", help="chunk size of the streaming corpus")
    prepare.add_argument("--workers", type=int, default=1, help="encoding processes for --streaming")
    return parser


def data_module_from(
    name: str | None, config: str | None, overrides: list[str]
) -> TabrasaDataModule | UnlabelledDataModule:
    """Instantiate the data module through jsonargparse, exactly as `tabrasa fit` would."""
    if (name is None) == (config is None):
        raise SystemExit("tabrasa data prepare: give a dataset NAME or --config FILE (one of them)")
    # A data module never picks its tokenizer: a NAME is prepared as its shipped preset configures it.
    path = preset_config(name) if name is not None else Path(str(config))
    loaded = yaml.safe_load(path.read_text()) or {}
    section = loaded if "class_path" in loaded else loaded.get("data")  # a data file or a whole config
    if not isinstance(section, dict) or "class_path" not in section:
        raise SystemExit(f"{path} has neither a data: section nor a top-level class_path")
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
    parser.add_subclass_arguments((TabrasaDataModule, UnlabelledDataModule), "data", required=True)
    parsed = parser.parse_object({"data": {"class_path": section["class_path"], "init_args": init_args}})
    return parser.instantiate_classes(parsed).data


def preset_config(name: str) -> Path:
    """The shipped preset of dataset `name`: configs/ of the working directory or of this checkout."""
    relative = Path("configs") / DATASETS[name].preset
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if (root / relative).is_file():
            return root / relative
    raise UserError(
        f"dataset {name!r} is prepared from its preset {relative}, which is not here (configs/ comes with "
        f"the repository, not the wheel); run from a checkout, or give --config FILE"
    )


def summary(data: TabrasaDataModule | UnlabelledDataModule) -> str:
    if isinstance(data, UnlabelledDataModule):  # inputs without labels (pretraining)
        return "\n".join(
            f"  {s:<10} {len(data.split_indices(s)):>9,} inputs" for s in ("train", "validation")
        )
    names = data.class_names
    lines = []
    for split, rows in data.splits.items():
        counts = Counter(rows["label"]) if "label" in rows.column_names else Counter()
        top = ", ".join(f"{names[k] if names else k}: {v:,}" for k, v in counts.most_common(3))
        majority = max(counts.values()) / len(rows) if counts else 0.0
        lines.append(f"  {split:<10} {len(rows):>9,} rows  majority class {majority:.1%}  ({top}, …)")
    return "\n".join(lines)


def list_datasets() -> int:
    for name, dataset in DATASETS.items():
        cls = dataset.module
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
    if args.streaming:
        from tabrasa.data.streaming_prepare import write_streaming_corpus  # litdata, only when asked for

        out = write_streaming_corpus(
            data, args.streaming, chunk_bytes=args.chunk_bytes, num_workers=args.workers
        )
        print(
            f"streaming corpus: {out} (read it with tabrasa.data.streaming.StreamingDataModule, path: {out})"
        )
    return 0
