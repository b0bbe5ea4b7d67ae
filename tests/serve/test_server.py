"""`tabrasa serve` as a real server (LitServe in a subprocess, one inference worker): health, batching,
bad input answered with a 4xx and one line while the server stays up, clients that vanish mid-request,
the API key, the ONNX backend and a graceful stop on SIGTERM."""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import psutil
import pytest

import tabrasa
from tests.serve import launch
from tests.serve.runs import png_bytes, wav_bytes

pytestmark = pytest.mark.slow


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


GOOD: dict[str, dict[str, Any]] = {
    "text": {"text": "a good film, really good"},
    "image": {"image": b64(png_bytes(210))},
    "audio": {"audio": b64(wav_bytes(2500.0))},
    "protein": {"protein": "KRDEKRDEKKRRDDEE"},
}


def listening(server: launch.Server) -> set[str]:
    """The addresses the server's processes listen on at its port."""
    port = urlparse(server.url).port
    main = psutil.Process(server.process.pid)
    return {
        c.laddr.ip
        for p in (main, *main.children(recursive=True))
        for c in p.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN and c.laddr.port == port
    }


def test_health_info_page_and_localhost_only(joint_server: launch.Server) -> None:
    assert httpx.get(f"{joint_server.url}/health").text == "ok"
    info = httpx.get(f"{joint_server.url}/info").json()["model"]
    assert sorted(t["name"] for t in info["tasks"]) == ["audio", "image", "protein", "text"]
    assert info["backend"] == "pytorch" and info["api_key"] is False
    page = httpx.get(f"{joint_server.url}/")
    assert page.status_code == 200 and "tabrasa serve" in page.text
    assert httpx.get(f"{joint_server.url}/page/app.js").status_code == 200
    assert listening(joint_server) == {"127.0.0.1"}


JSON = {"content-type": "application/json"}
NOT_AUDIO = b"RIFF\x00\x00WAVEjunk" * 8
BAD: list[tuple[str, dict[str, Any], int, str]] = [
    ("corrupt image", {"json": {"image": b64(b"\x89PNG\r\n\x1a\nnot really")}}, 422, "cannot be decoded"),
    ("zero-byte image", {"files": {"image": ("empty.png", b"")}}, 422, "0 bytes"),
    ("WAV that is not audio", {"files": {"audio": ("x.wav", NOT_AUDIO)}}, 422, "cannot be decoded"),
    ("10 ms clip", {"json": {"audio": b64(wav_bytes(seconds=0.01))}}, 422, "10.0 ms long"),
    ("wrong modality for the task", {"json": {"text": "fine", "task": "image"}}, 422, "reads image, not"),
    ("malformed JSON", {"content": b'{"text": "a', "headers": JSON}, 400, "not valid JSON"),
    ("missing field", {"json": {"task": "text"}}, 400, "holds no input"),
    ("unknown field", {"json": {"txt": "typo"}}, 400, "unknown field"),
    ("non-residue letters", {"json": {"protein": "MKV*J1"}}, 422, "not in the ESM alphabet"),
    ("oversized payload", {"json": {"text": "x" * 300_000}}, 413, "--max-bytes"),
    ("unsupported content type", {"content": b"a", "headers": {"content-type": "text/csv"}}, 415, "not read"),
    ("bad base64", {"json": {"image": "%%%"}}, 400, "base64"),
]  # fmt: skip


def test_every_bad_input_gets_a_4xx_with_one_line_and_the_server_stays_up(
    joint_server: launch.Server,
) -> None:
    with httpx.Client(base_url=joint_server.url, timeout=30) as client:
        for name, request, status, words in BAD:
            response = client.post("/predict", **request)
            assert response.status_code == status, f"{name}: {response.status_code} {response.text}"
            detail = response.json()["detail"]
            assert isinstance(detail, str) and words in detail, f"{name}: {detail}"
            assert "\n" not in detail and "Traceback" not in detail, name
        assert client.get("/predict").status_code == 405
        long = client.post("/predict", json={"text": "a good film " * 40})
        assert long.status_code == 200 and "truncated" in long.json()["warnings"][0]
        for modality, payload in GOOD.items():  # the server is still up and answers every modality
            answer = client.post("/predict", json=payload)
            assert answer.status_code == 200 and answer.json()["task"] == modality
    assert joint_server.process.poll() is None


async def post_all(
    url: str, payloads: list[dict[str, Any]], key: dict[str, str] | None = None
) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=60, headers=key) as client:
        return await asyncio.gather(*(client.post("/predict", json=p) for p in payloads))


def test_concurrent_requests_are_batched_and_answered_as_alone(joint_server: launch.Server) -> None:
    payloads = [{**GOOD[m], "id": f"{m}{i}"} for i in range(6) for m in GOOD]
    together = asyncio.run(post_all(joint_server.url, payloads))
    alone = [httpx.post(f"{joint_server.url}/predict", json=p, timeout=30) for p in payloads[:4]]
    assert all(r.status_code == 200 for r in together)
    assert [r.json()["id"] for r in together] == [p["id"] for p in payloads]  # each answer to its request
    for one, batched in zip(alone, together[:4], strict=True):
        for column, value in one.json().items():
            if column.startswith("prob_"):
                assert batched.json()[column] == pytest.approx(value, abs=1e-5)


def vanish(url: str, body_sent: int, declared: int) -> None:
    """Open a connection, send the headers and part of a body, and close it without waiting."""
    where = urlparse(url)
    with socket.create_connection((where.hostname, where.port), timeout=5) as raw:
        head = (f"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {declared}\r\n\r\n")  # fmt: skip
        raw.sendall(head.encode() + b'{"text": "' + b"a" * max(0, body_sent - 10))


def test_a_client_that_disconnects_mid_request_does_not_stall_the_others(joint_server: launch.Server) -> None:
    where = urlparse(joint_server.url)
    stalled = socket.create_connection((where.hostname, where.port), timeout=5)  # holds a half-sent body
    stalled.sendall(b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 5000\r\n\r\n{\"text\": ")  # fmt: skip
    vanishers = [threading.Thread(target=vanish, args=(joint_server.url, n, 5000)) for n in (0, 40, 400)]
    whole = threading.Thread(target=vanish, args=(joint_server.url, 4990, 28))  # a full body, then gone
    start = time.monotonic()
    for thread in (*vanishers, whole):
        thread.start()
    answers = asyncio.run(post_all(joint_server.url, [GOOD["text"]] * 16))
    elapsed = time.monotonic() - start
    for thread in (*vanishers, whole):
        thread.join()
    stalled.close()
    assert all(r.status_code == 200 for r in answers)
    assert elapsed < 20, f"16 requests took {elapsed:.1f} s beside the clients that went away"
    assert httpx.get(f"{joint_server.url}/health").status_code == 200


def test_a_keyed_onnx_server_answers_as_the_pytorch_run_and_finishes_its_request_on_sigterm(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    """API key, wrong modality, the ONNX backend's answers against the PyTorch run's, batching by timeout
    and SIGTERM with a request in flight, on one server: each server start costs two interpreters' imports
    (about 30 s on a loaded core). The PyTorch backend's batching is the joint server's tests'."""
    texts = ["a good film, really good", "a bad film, really bad", "really"]
    expected = tabrasa.load(str(trained["text"])).predict(texts)
    options = (
        "--max-batch-size", "4", "--batch-timeout", "3", "--log-level", "warning",
        "--onnx", "--onnx-dir", str(tmp_path / "graph"),
    )  # fmt: skip
    server = launch.start(trained["text"], tmp_path / "server.log", *options, env={"TABRASA_API_KEY": "k3y"})
    key = {"X-API-Key": "k3y"}
    try:
        assert httpx.get(f"{server.url}/info", headers=key).json()["model"]["backend"] == "onnx"
        assert (tmp_path / "graph" / "model.onnx").is_file()
        answers = asyncio.run(post_all(server.url, [{"text": t} for t in texts], key))
        for answer, row in zip(answers, expected, strict=True):
            assert answer.json()["prediction"] == row["prediction"]
            assert answer.json()["prob_pos"] == pytest.approx(row["prob_pos"], abs=1e-4)
        url = f"{server.url}/predict"
        assert httpx.post(url, json=GOOD["text"], timeout=30).status_code == 401
        assert (
            httpx.post(url, json=GOOD["text"], headers={"X-API-Key": "nope"}, timeout=30).status_code == 401
        )
        assert httpx.get(f"{server.url}/health").status_code == 401  # LitServe's auth hook guards it too
        wrong = httpx.post(url, json=GOOD["image"], headers=key, timeout=30)
        assert wrong.status_code == 422 and "this run reads text, not image" in wrong.json()["detail"]
        started = time.monotonic()
        alone = httpx.post(url, json=GOOD["text"], headers=key, timeout=30)
        waited_alone = time.monotonic() - started
        started = time.monotonic()
        together = asyncio.run(post_all(server.url, [GOOD["text"]] * 4, key))
        waited_together = time.monotonic() - started
        assert alone.status_code == 200 and all(r.status_code == 200 for r in together)
        # One request waits the whole batch timeout for company; four fill the batch and run at once.
        assert waited_alone >= 2.9 and waited_together < 2.5, (waited_alone, waited_together)
        workers = psutil.Process(server.process.pid).children(recursive=True)
        answer: dict[str, httpx.Response] = {}

        def in_flight() -> None:
            answer["r"] = httpx.post(url, json=GOOD["text"], headers=key, timeout=60)

        thread = threading.Thread(target=in_flight)
        thread.start()
        time.sleep(1.0)  # the request now waits in its batch (batch timeout 3 s)
        assert "r" not in answer
        started = time.monotonic()
        server.process.terminate()  # SIGTERM
        thread.join(timeout=60)
        assert answer["r"].status_code == 200 and answer["r"].json()["prediction"] in ("neg", "pos")
        assert server.process.wait(timeout=60) == 0, server.output()[-3000:]
        assert time.monotonic() - started < 30
        # Children end just after the main process (multiprocessing's resource tracker exits when its
        # last holder has gone), so they are given a moment; one that outlives it was left running.
        _, alive = psutil.wait_procs(workers, timeout=15)
        assert not [w for w in alive if w.is_running() and w.status() != psutil.STATUS_ZOMBIE], alive
        with pytest.raises(httpx.TransportError):
            httpx.post(url, json=GOOD["text"], headers=key, timeout=5)
    finally:
        launch.stop(server)
