"""An ASGI middleware that refuses, with a 4xx and a one-line JSON message, request bodies that LitServe
would otherwise answer with a 500: LitServe parses the body itself (`request.json()` or `request.form()`)
and reports any parse error as an internal error.

For a POST to a guarded path it checks, before LitServe sees the request: the size (the Content-Length
header, then the bytes as they arrive, so an oversized body is never held whole), the content type (JSON,
multipart or url-encoded form), and that the body parses. A body that passes is handed on unchanged. A
client that disconnects mid-body ends only its own request.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tabrasa.serve.refusals import refusal

JSON_HINT = 'send a JSON object such as {"text": "a fine film"}'


class RequestGuard:
    def __init__(self, app: ASGIApp, max_bytes: int, paths: Collection[str] = ("/predict",)) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        problem = self.check_length(headers.get("content-length"))
        kind = body_kind(headers.get("content-type", ""))
        if problem is None and kind is None:
            problem = (415, f"content type {headers.get('content-type')!r} is not read here; {JSON_HINT}, "
                            f"or a multipart/form-data upload")  # fmt: skip
        if problem is not None:
            await refusal(*problem)(scope, receive, send)
            return
        body = await self.read_body(receive)
        if body is None:  # the client went away mid-body: nobody to answer
            return
        if isinstance(body, tuple):
            await refusal(*body)(scope, receive, send)
            return
        replay = Replay(body, receive)
        problem = parse_problem(body) if kind == "json" else await form_problem(scope, Replay(body, receive))
        if problem is not None:
            await refusal(400, problem)(scope, replay, send)
            return
        await self.app(scope, replay, send)

    def check_length(self, length: str | None) -> tuple[int, str] | None:
        if length is None:
            return None
        if not length.isdigit():
            return 400, f"Content-Length {length!r} is not a byte count"
        if int(length) > self.max_bytes:
            return 413, self.too_large(int(length))
        return None

    def too_large(self, size: int) -> str:
        return (
            f"the request body is {size} bytes or more, over the server's limit of {self.max_bytes} bytes "
            f"(--max-bytes); send a smaller input"
        )

    async def read_body(self, receive: Receive) -> bytes | tuple[int, str] | None:
        """The whole body, or (413, why) as soon as it passes the limit, or None if the client left."""
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return 413, self.too_large(size)
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks)


class Replay:
    """An ASGI `receive` that first hands out the buffered body, then listens to the client again (so a
    disconnect while the request waits for its batch is still seen)."""

    def __init__(self, body: bytes, receive: Receive) -> None:
        self.body: bytes | None = body
        self.receive = receive

    async def __call__(self) -> Message:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        return await self.receive()


def body_kind(content_type: str) -> str | None:
    media = content_type.split(";", 1)[0].strip().lower()
    if media in ("", "application/json") or media.endswith("+json"):
        return "json"  # no content type: LitServe reads JSON
    if media in ("multipart/form-data", "application/x-www-form-urlencoded"):
        return "form"
    return None


def parse_problem(body: bytes) -> str | None:
    if not body.strip():
        return f"the request body is empty; {JSON_HINT}"
    try:
        value: Any = json.loads(body)
    except ValueError as error:  # JSONDecodeError, or bytes that are not UTF-8/16/32
        where = (
            f" at line {error.lineno} column {error.colno}" if isinstance(error, json.JSONDecodeError) else ""
        )
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        return f"the request body is not valid JSON{where} ({reason}); {JSON_HINT}"
    if not isinstance(value, dict):
        return f"the JSON body is a {type(value).__name__}, not an object; {JSON_HINT}"
    return None


async def form_problem(scope: Scope, receive: Receive) -> str | None:
    """Parse the form as LitServe will (starlette's parser), so a malformed one is a 400, not a 500."""
    request = Request(scope, receive)
    try:
        form = await request.form()
    except Exception as error:  # starlette raises MultiPartException, AssertionError, KeyError, ValueError...
        return f"the form body cannot be parsed ({type(error).__name__}: {error}); send multipart/form-data"
    await form.close()
    return None
