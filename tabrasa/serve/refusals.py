"""How the server says no: a `BadInputError` (an HTTP status and a one-line message) while a request is read,
and one JSON body for every refusal, `{"detail": "<one line>"}`, the shape of FastAPI's own errors."""

from __future__ import annotations

from fastapi.responses import JSONResponse

from tabrasa.errors import UserError

MESSAGE_LIMIT = 300


def one_line(text: str) -> str:
    """A message as one line of at most MESSAGE_LIMIT characters (library errors can span lines)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= MESSAGE_LIMIT else flat[: MESSAGE_LIMIT - 3] + "..."


class BadInputError(UserError):
    """A request the server refuses: `status` 400 (malformed) or 422 (unusable input), a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(one_line(message))
        self.status = status


def refusal(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": one_line(message)}, status_code=status)
