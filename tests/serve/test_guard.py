"""The request guard in front of LitServe: bodies LitServe would answer with a 500 get a 4xx and one line,
oversized ones are cut off as they arrive, and good ones reach the app unchanged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tabrasa.serve.guard import RequestGuard

LIMIT = 1000


async def echo(request: Request) -> JSONResponse:
    body = await request.body()
    return JSONResponse({"bytes": len(body), "type": request.headers.get("content-type", "")})


def client() -> httpx.AsyncClient:
    app = RequestGuard(Starlette(routes=[Route("/predict", echo, methods=["POST"]),
                                         Route("/other", echo, methods=["POST"])]), LIMIT)  # fmt: skip
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def post(path: str = "/predict", **kwargs: Any) -> httpx.Response:
    async def send() -> httpx.Response:
        async with client() as http:
            return await http.post(path, **kwargs)

    return asyncio.run(send())


@pytest.mark.parametrize(
    ("kwargs", "status", "words"),
    [
        ({"content": b'{"text": 1', "headers": {"content-type": "application/json"}}, 400, "not valid JSON"),
        ({"content": b"[1, 2]", "headers": {"content-type": "application/json"}}, 400, "not an object"),
        ({"content": b"", "headers": {"content-type": "application/json"}}, 400, "body is empty"),
        ({"content": b"\xff\xfe\x00garbage", "headers": {"content-type": "application/json"}}, 400, "JSON"),
        ({"content": b"text", "headers": {"content-type": "text/plain"}}, 415, "is not read here"),
        ({"content": b"--x\r\nbroken", "headers": {"content-type": "multipart/form-data"}}, 400,
         "form body cannot be parsed"),
        ({"content": b"x" * (LIMIT + 1), "headers": {"content-type": "application/json"}}, 413, "over the"),
    ],
)  # fmt: skip
def test_bodies_litserve_cannot_parse_get_a_4xx_and_one_line(
    kwargs: dict[str, Any], status: int, words: str
) -> None:
    response = post(**kwargs)
    assert response.status_code == status
    detail = response.json()["detail"]
    assert words in detail and "\n" not in detail, detail


def test_an_oversized_stream_without_a_length_is_cut_off() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(100):
            yield b"x" * 100  # 10 kB in all, no Content-Length

    response = post(content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_good_bodies_reach_the_app_unchanged() -> None:
    body = json.dumps({"text": "a fine film"}).encode()
    assert post(content=body, headers={"content-type": "application/json"}).json()["bytes"] == len(body)
    form = post(files={"image": ("a.png", b"\x89PNG...")}, data={"attention": "1"})
    assert form.status_code == 200 and form.json()["type"].startswith("multipart/form-data")
    assert post(data={"text": "fine"}).status_code == 200  # url-encoded
    assert post("/other", content=b"not json", headers={"content-type": "text/plain"}).status_code == 200
