"""The `tabrasa` command line: one module per subcommand, dispatched by `main`."""

from tabrasa.cli.main import main

__all__ = ["main"]
