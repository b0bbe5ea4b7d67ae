"""`tabrasa serve`: one trained run over HTTP on LitServe, with a page at `/` (see docs/serve.md).

For the `tabrasa` command: `add_arguments(parser)` adds the options to an argparse parser, `run(options)`
serves until SIGTERM or Ctrl+C and returns the exit status (0 after a clean stop); `main(args)` does both,
as the other subcommands' entry points do. A mistake in the options or the run is a UserError.

The run is loaded once here before the server starts, so a wrong path, task or export is one line now,
not a traceback from an inference worker later; each worker then loads it again in its `setup`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from tabrasa.errors import UserError

API_KEY_ENV = "TABRASA_API_KEY"
HOSTS = ("127.0.0.1", "0.0.0.0", "::")  # the addresses LitServe binds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", nargs="?", default=None, metavar="RUN_OR_CKPT",
                        help="run folder (runs/NAME/version_N) or a .ckpt file")  # fmt: skip
    parser.add_argument(
        "--run", default=None, help="the same, as an option (predict-files and export take it)"
    )
    parser.add_argument("--ckpt", default="best", help="best, last or a checkpoint path (default best)")
    parser.add_argument("--task", default=None, help="joint runs: serve only this task (default all)")
    parser.add_argument("--onnx", action="store_true", help="run the ONNX export with ONNX Runtime")
    parser.add_argument(
        "--onnx-dir", "--onnx_dir", dest="onnx_dir", default=None,
        help="folder of the ONNX export: reused if it holds this checkpoint's, else written there "
        "(default: a temporary folder)",
    )  # fmt: skip
    parser.add_argument(
        "--host", default="127.0.0.1", choices=HOSTS, help="address to bind (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--max-batch-size", "--max_batch_size", dest="max_batch_size", type=int, default=8,
        help="most concurrent requests LitServe batches into one forward pass (default 8)",
    )  # fmt: skip
    parser.add_argument(
        "--batch-timeout", "--batch_timeout", dest="batch_timeout", type=float, default=0.01,
        help="seconds a batch waits to fill before it runs (default 0.01)",
    )  # fmt: skip
    parser.add_argument(
        "--max-bytes", "--max_bytes", dest="max_bytes", type=int, default=10_000_000,
        help="largest request body accepted, in bytes (default 10000000); larger ones get 413",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a request may wait (default 30)")
    parser.add_argument("--workers", type=int, default=1, help="inference worker processes (default 1)")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument(
        "--api-key", "--api_key", dest="api_key", default=None,
        help=f"require this key (X-API-Key or Authorization: Bearer); default ${API_KEY_ENV}, else open",
    )  # fmt: skip
    parser.add_argument("--log-level", "--log_level", dest="log_level", default="info",
                        choices=["critical", "error", "warning", "info", "debug"])  # fmt: skip


def check(options: argparse.Namespace) -> None:
    if (options.source is None) == (options.run is None):
        raise UserError(
            "tabrasa serve needs one run: give RUN_OR_CKPT (or --run), e.g. tabrasa serve runs/imdb/version_0"
        )
    options.run = options.run or options.source
    if options.max_batch_size < 1:
        raise UserError(f"--max-batch-size {options.max_batch_size} must be >= 1")
    if options.batch_timeout < 0:
        raise UserError(f"--batch-timeout {options.batch_timeout} must be >= 0 seconds")
    if options.max_bytes < 1:
        raise UserError(f"--max-bytes {options.max_bytes} must be >= 1")
    if options.timeout <= options.batch_timeout:
        raise UserError(
            f"--timeout {options.timeout} must be longer than --batch-timeout {options.batch_timeout}"
        )
    if options.workers < 1:
        raise UserError(f"--workers {options.workers} must be >= 1")
    if not 1024 <= options.port <= 65535:
        raise UserError(f"--port {options.port} must be from 1024 to 65535")
    if options.onnx_dir is not None and not options.onnx:
        raise UserError("--onnx-dir is the folder of the ONNX backend; add --onnx, or leave --onnx-dir out")


def run(options: argparse.Namespace) -> int:
    """Serve until SIGTERM or Ctrl+C; 0 once LitServe has stopped its workers."""
    check(options)
    from tabrasa.serve.api import TabrasaAPI
    from tabrasa.serve.model import ServeSource, load_served
    from tabrasa.serve.server import build_server, stop_on_sigterm

    api_key = key_of(options)
    temporary = (
        tempfile.mkdtemp(prefix="tabrasa-onnx-") if options.onnx and options.onnx_dir is None else None
    )
    try:
        source = ServeSource(
            options.run, options.ckpt, options.task, options.onnx, options.onnx_dir or temporary
        )
        served = load_served(source)  # the mistakes of --run/--task/--onnx surface here, as one line
        for task, difference in served.parity.items():
            sys.stderr.write(
                f"exported {task} to ONNX; onnxruntime vs PyTorch max abs difference {difference:.2e}\n"
            )
        metadata = {
            **served.info(),
            "api_key": api_key is not None,
            "max_bytes": options.max_bytes,
            "max_batch_size": options.max_batch_size,
        }
        del served
        api = TabrasaAPI(source, options.max_batch_size, options.batch_timeout, api_key)
        server = build_server(
            api, metadata, options.max_bytes, options.timeout, options.workers, accelerator(options)
        )
        stop_on_sigterm(server)
        kinds = ", ".join(f"{t['name']} ({t['modality']})" for t in metadata["tasks"])
        sys.stderr.write(f"serving {options.run}: {kinds} on {metadata['backend']} at "
                         f"http://{options.host}:{options.port}/\n")  # fmt: skip
        server.run(
            host=options.host, port=options.port, log_level=options.log_level, generate_client_file=False
        )
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    return 0


def key_of(options: argparse.Namespace) -> str | None:
    """--api-key, else $TABRASA_API_KEY (kept out of `ps` listings), else None: an open server."""
    return options.api_key or os.environ.get(API_KEY_ENV) or None


def accelerator(options: argparse.Namespace) -> str:
    if options.device != "auto":
        return str(options.device)
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabrasa serve",
        description="Serve a trained run over HTTP (LitServe): POST /predict answers the class and its "
        "probabilities, concurrent requests are batched, and / is a page to try inputs and see attention.",
    )
    add_arguments(parser)
    return run(parser.parse_args(args))
