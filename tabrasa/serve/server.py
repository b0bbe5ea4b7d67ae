"""The LitServer of a trained run: the LitAPI behind the request guard, the page at `/`, and a SIGTERM that
ends the server the way Ctrl+C does.

LitServe serves `/predict` (the API), `/health` (200 once every inference worker is ready, else 503) and
`/info` (the model metadata given here: run, backend, tasks, classes, limits). Both of the latter pass the
API's `authorize` hook, so with an API key they need it too.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import litserve as ls
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from tabrasa.serve.api import TabrasaAPI
from tabrasa.serve.guard import RequestGuard

PAGE = Path(__file__).parent / "page"


def build_server(
    api: TabrasaAPI,
    metadata: dict[str, Any],
    max_bytes: int,
    timeout: float,
    workers: int = 1,
    accelerator: str = "cpu",
) -> ls.LitServer:
    server = ls.LitServer(
        api,
        accelerator=accelerator,  # type: ignore[arg-type]
        devices=1,
        workers_per_device=workers,
        timeout=timeout,
        model_metadata=metadata,
        middlewares=[(RequestGuard, {"max_bytes": max_bytes, "paths": [api.api_path]})],
    )
    add_page(server.app)
    return server


def add_page(app: FastAPI) -> None:
    """The page (tabrasa/serve/page/) at `/`, its script and style under `/page/`. LitServe answers `GET /`
    with the text "litserve running"; that route is replaced. The page holds no model data, so it needs
    no API key (its requests send the one typed into it)."""
    app.router.routes[:] = [route for route in app.router.routes if getattr(route, "path", None) != "/"]

    async def index() -> FileResponse:
        return FileResponse(PAGE / "index.html")

    app.add_api_route("/", index, methods=["GET"], include_in_schema=False)
    app.mount("/page", StaticFiles(directory=PAGE), name="page")


def stop_on_sigterm(server: ls.LitServer) -> None:
    """SIGTERM (what `kill`, Docker and Kubernetes send) stops the server as LitServe's own shutdown endpoint
    does, by setting its shutdown event: LitServe then stops its HTTP workers, each of which (uvicorn)
    stops accepting, finishes its in-flight requests (30 s at most) and exits, and only then stops the
    inference workers. Python's default would end the main process at once and leave the workers running.

    The event lives in a multiprocessing manager and the main thread is blocked inside `event.wait()` on
    its connection when the signal arrives, so it is set from another thread (another connection). The HTTP
    workers are forked from this process and inherit the handler: uvicorn re-raises the signal there after
    its own graceful stop, which then ends the worker with status 0."""
    main = os.getpid()

    def handle(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != main:
            raise SystemExit(0)
        event = getattr(server, "_shutdown_event", None)  # None until LitServe has started its manager
        if event is None:
            raise KeyboardInterrupt
        threading.Thread(target=event.set, name="sigterm-shutdown", daemon=True).start()

    signal.signal(signal.SIGTERM, handle)
