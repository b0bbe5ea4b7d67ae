"""`python -m tabrasa.serve --run RUN ...`, the same as `tabrasa serve`: a UserError is its one-line message
and exit status 2 (TABRASA_TRACEBACK=1 shows the traceback)."""

from __future__ import annotations

import os
import sys

from tabrasa.errors import UserError
from tabrasa.serve.command import main

if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UserError as error:
        if os.environ.get("TABRASA_TRACEBACK") == "1":
            raise
        sys.stderr.write(f"tabrasa serve: error: {error}\n(set TABRASA_TRACEBACK=1 for details)\n")
        sys.exit(2)
