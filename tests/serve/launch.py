"""`tabrasa serve` in a subprocess on a free port, waited for until /health answers 200."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 300.0  # two interpreters import torch and load the run; the test machine is shared


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def start(run: Path, log: Path, *options: str, env: dict[str, str] | None = None) -> Server:
    port = free_port()
    command = [sys.executable, "-m", "tabrasa.serve", "--run", str(run), "--port", str(port), *options]
    environment = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", **(env or {})}
    handle = open(log, "wb")  # noqa: SIM115 (the child writes it until it exits; the test reads it)
    process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=handle, stderr=subprocess.STDOUT)
    server = Server(process, f"http://127.0.0.1:{port}", log)
    wait_healthy(server, (env or {}).get("TABRASA_API_KEY"))
    return server


def wait_healthy(server: Server, key: str | None = None) -> None:
    headers = {"X-API-Key": key} if key else {}
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(
                f"the server exited ({server.process.returncode}):\n{server.output()[-4000:]}"
            )
        try:
            if httpx.get(f"{server.url}/health", headers=headers, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    stop(server)
    raise AssertionError(f"the server was not healthy after {START_TIMEOUT} s:\n{server.output()[-4000:]}")


def stop(server: Server, timeout: float = 60) -> int:
    """SIGTERM, then SIGKILL for it and its workers if it does not stop in time; the exit status."""
    if server.process.poll() is None:
        workers = psutil.Process(server.process.pid).children(recursive=True)
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            for worker in workers:
                with contextlib.suppress(psutil.NoSuchProcess):
                    worker.kill()
            server.process.kill()
            server.process.wait()
    return server.process.returncode


@contextmanager
def serving(run: Path, log: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    server = start(run, log, *options, env=env)
    try:
        yield server
    finally:
        stop(server)
