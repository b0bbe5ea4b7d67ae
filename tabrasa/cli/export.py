"""`tabrasa predict-files` and `tabrasa export`: a trained run on raw files, and its ONNX graph.

(`tabrasa predict` stays LightningCLI's: predictions over a data module's test split, as tensors.)
"""

from __future__ import annotations

import argparse
import sys

import torch

from tabrasa.errors import UserError


def predict_files_main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabrasa predict-files",
        description="Predict a trained run's classes for raw files: one output row per input, with its "
        "identifier, the predicted class and every class probability; unreadable inputs are listed with "
        "the reason.",
    )
    parser.add_argument("--run", required=True, help="run folder (runs/NAME/version_N) or a .ckpt file")
    parser.add_argument("--ckpt", default="best", help="best, last or a checkpoint path (default best)")
    parser.add_argument("--input", required=True, help="a file or a folder of the run's modality")
    parser.add_argument("--column", default=None, help="CSV column / JSONL key holding the text (text)")
    parser.add_argument("--out", required=True, help="predictions.csv or predictions.jsonl")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--no_progress", action="store_true", help="no progress bar (logs, CI)")
    options = parser.parse_args(args)
    if options.batch_size < 1:
        raise UserError(f"--batch_size {options.batch_size} must be >= 1")

    from tabrasa.deploy.predictor import errors_in, load
    from tabrasa.deploy.writer import write_rows

    predictor = load(options.run, options.ckpt, options.device)
    rows = predictor.predict_files(options.input, options.column, options.batch_size, not options.no_progress)
    path = write_rows(rows, predictor.columns(), options.out)
    failed = errors_in(rows)
    note = f"; {failed} could not be read (see the error column)" if failed else ""
    sys.stderr.write(f"wrote {len(rows)} predictions to {path}{note}\n")
    return 0


def export_main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabrasa export",
        description="Export a trained run (embedder + backbone + head) as one ONNX graph with dynamic batch "
        "and sequence axes, with the tokenizer's settings beside it.",
    )
    parser.add_argument("--run", required=True, help="run folder (runs/NAME/version_N) or a .ckpt file")
    parser.add_argument("--ckpt", default="best", help="best, last or a checkpoint path (default best)")
    parser.add_argument("--format", default="onnx", choices=["onnx"])
    parser.add_argument("--out", required=True, help="output folder (model.onnx, tokenizer.json, ...)")
    parser.add_argument("--no_check", action="store_true", help="skip the onnxruntime parity check")
    options = parser.parse_args(args)

    from tabrasa.deploy.onnx_export import export_onnx
    from tabrasa.deploy.parity import parity
    from tabrasa.deploy.run import load_run

    run = load_run(options.run, options.ckpt)
    exported = export_onnx(run, options.out)
    message = f"wrote {exported.path} (inputs {', '.join(exported.input_names)})"
    if not options.no_check:
        message += f"; onnxruntime vs PyTorch max abs difference {parity(run, exported.path):.2e}"
    sys.stderr.write(message + "\n")
    return 0
