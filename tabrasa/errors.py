"""The one exception type for a user's mistake: bad input, a bad setting, a missing file.

The `tabrasa` command prints a `UserError` as its one-line message and exits with status 2, without a
Python traceback (set `TABRASA_TRACEBACK=1` to see it). Every other exception is an internal error and
keeps its traceback. It subclasses ValueError so callers that already catch ValueError keep working.
"""

from __future__ import annotations


class UserError(ValueError):
    """A mistake the user can fix: the message names the input, the problem and the fix."""
