"""`python -m tabrasa.cli ...` runs the `tabrasa` command."""

import sys

from tabrasa.cli.main import main

sys.exit(main())
