"""The `tabrasa` command: `fit|validate|test|predict --config ...` through LightningCLI, plus the
subcommands of this package (`data`, `convert`, `inspect`, `predict-files`, `export`, `serve`).

A user's mistake (a `UserError`) ends the command with its one-line message and exit status 2.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

from jsonargparse import ArgumentError

from tabrasa.errors import UserError
from tabrasa.training.freed_memory import keep_freed_memory
from tabrasa.training.lightning_cli import build_cli

# Each subcommand's entry point, imported only when it runs: each pulls in its own layer (deploy, inspect,
# the serving stack), which `tabrasa fit` never needs.
SUBCOMMANDS = {
    "convert": ("tabrasa.cli.convert", "main"),
    "data": ("tabrasa.cli.data", "main"),
    "inspect": ("tabrasa.cli.inspect", "main"),
    "predict-files": ("tabrasa.cli.export", "predict_files_main"),
    "export": ("tabrasa.cli.export", "export_main"),
    "serve": ("tabrasa.cli.serve", "main"),
}


def _subcommand(name: str) -> Callable[[list[str]], int] | None:
    if name not in SUBCOMMANDS:
        return None
    module, function = SUBCOMMANDS[name]
    entry: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
    return entry


def dispatch(args: list[str]) -> int:
    command = _subcommand(args[0]) if args else None
    if command is not None:
        return command(args[1:])
    # Training and scoring reuse their freed activations instead of faulting them in again every step
    # (tabrasa.training.freed_memory); the other subcommands, a long-lived server among them, keep glibc's.
    keep_freed_memory()
    build_cli(args)
    return 0


def user_error_in(error: BaseException) -> UserError | None:
    """The UserError behind an exception, if any: jsonargparse and Lightning wrap errors raised while
    classes are built (as the cause or the context), and the user should read the original message."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, UserError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def main(argv: list[str] | None = None) -> int:
    """The `tabrasa` command. A user's mistake (a `UserError`: bad input, bad setting, missing file) ends it
    with that one-line message and exit status 2; TABRASA_TRACEBACK=1 shows the traceback as well. Any other
    exception is an internal error and keeps its traceback."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        return dispatch(args)
    except Exception as error:
        mistake = user_error_in(error)
        if os.environ.get("TABRASA_TRACEBACK") == "1" or (
            mistake is None and not isinstance(error, ArgumentError)
        ):
            raise
        message = str(mistake if mistake is not None else error).strip()
        hint = "run with --help for the options" if mistake is None else "set TABRASA_TRACEBACK=1 for details"
        sys.stderr.write(f"tabrasa: error: {message}\n({hint})\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
