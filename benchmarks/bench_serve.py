"""Load on `tabrasa serve`, measured with a real HTTP client (aiohttp, asyncio): latency and throughput at 1
and at N concurrent clients, offline `Predictor.predict` throughput on the same inputs, failed requests,
and the server's resident memory across many requests. Writes bench_serve.json and bench_serve.md.

    python -m benchmarks.bench_serve runs/imdb/version_0 --out results/serve
    python -m benchmarks.bench_serve RUN --clients 32 --duration 60 --memory-requests 10000 --onnx

The inputs are the run's own test split (text and protein runs; synthetic ones for image and audio runs),
sent one example per request, as a client would; the server batches concurrent requests itself. The
offline number runs before the server starts, so the two never share the CPU. Exit status 1 if any
request failed.

The load generator shares the machine with the server, so it must cost little CPU: against the same IMDB
preset server on 2 cores, 32 clients on httpx's AsyncClient got 188 and 164 requests/s where aiohttp's
client got 207 and 220 (batch timeouts 0.005 and 0.01 s, 20 s each), so the client is aiohttp. The batch
timeout defaults to the server's own (`tabrasa serve --batch-timeout`, 0.01 s).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import io
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Phase:
    clients: int
    requests: int = 0
    failed: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        lat = np.asarray(self.latencies_ms) if self.latencies_ms else np.zeros(1)
        return {
            "clients": self.clients,
            "requests": self.requests,
            "failed": self.failed,
            "failures": self.failures,
            "seconds": round(self.seconds, 2),
            "throughput_rps": round(self.requests / max(self.seconds, 1e-9), 2),
            "p50_ms": round(float(np.percentile(lat, 50)), 2),
            "p99_ms": round(float(np.percentile(lat, 99)), 2),
            "mean_ms": round(float(lat.mean()), 2),
        }


def bench_inputs(run: str, count: int) -> tuple[Any, list[Any], list[dict[str, Any]]]:
    """(predictor, raw examples, request bodies): the run's test split where it holds strings."""
    import tabrasa
    from tabrasa.deploy.examples import example_raws
    from tabrasa.inspect.source import modality_of

    predictor = tabrasa.load(run)
    modality = modality_of(predictor.tokenizer)
    raws: list[Any] = []
    if modality in ("text", "protein"):
        column = "text" if modality == "text" else "sequence"
        splits = predictor.run.datamodule.load_splits()
        split = "test" if "test" in splits else "train"
        raws = list(splits[split][column][:count])
    if not raws:
        raws = example_raws(predictor.tokenizer, modality, count, seed=1)
    return predictor, raws, [body(modality, raw) for raw in raws]


def body(modality: str, raw: Any) -> dict[str, Any]:
    if modality in ("text", "protein"):
        return {modality: raw}
    buffer = io.BytesIO()
    if modality == "image":
        raw.save(buffer, format="PNG")
    else:
        import soundfile

        soundfile.write(buffer, raw["audio"], raw["sample_rate"], format="WAV")
    return {modality: base64.b64encode(buffer.getvalue()).decode()}


def offline_throughput(predictor: Any, raws: list[Any], batch_size: int, seconds: float) -> dict[str, Any]:
    predictor.predict(raws[:batch_size], batch_size=batch_size)  # warm-up
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += len(predictor.predict(raws, batch_size=batch_size))
    elapsed = time.perf_counter() - start
    return {"examples": done, "seconds": round(elapsed, 2), "batch_size": batch_size,
            "throughput_eps": round(done / elapsed, 2)}  # fmt: skip


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(args: argparse.Namespace, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "tabrasa.serve", "--run", args.run, "--port", str(port),
        "--max-batch-size", str(args.max_batch_size), "--batch-timeout", str(args.batch_timeout),
        "--timeout", "120", "--log-level", "warning", *(["--onnx"] if args.onnx else []),
    ]  # fmt: skip
    handle = open(log, "wb")  # noqa: SIM115 (the server writes it until it exits)
    process = subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited ({process.returncode}); see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    process.kill()
    raise SystemExit(f"the server was not healthy after 600 s; see {log}")


def resident_mb(pid: int) -> float:
    """RSS of the server and all its processes (HTTP workers, inference workers, manager), in MB."""
    main = psutil.Process(pid)
    total = 0
    for process in (main, *main.children(recursive=True)):
        with contextlib.suppress(psutil.NoSuchProcess):
            total += process.memory_info().rss
    return round(total / 2**20, 1)


async def load(url: str, bodies: list[dict[str, Any]], clients: int, seconds: float | None = None,
               total: int | None = None, on_progress: Any = None) -> Phase:  # fmt: skip
    """`clients` concurrent clients, each posting one request after another, for `seconds` or until
    `total` requests are done. Latency is per request, from send to the full answer."""
    phase = Phase(clients)
    counter = iter(range(10**12))
    deadline = time.perf_counter() + (seconds if seconds is not None else 10**9)

    async def client(http: aiohttp.ClientSession) -> None:
        while time.perf_counter() < deadline:
            index = next(counter)
            if total is not None and index >= total:
                return
            sent = time.perf_counter()
            try:
                async with http.post("/predict", json=bodies[index % len(bodies)]) as answer:
                    await answer.read()  # latency ends with the whole answer, not its headers
                    ok, why = answer.status == 200, str(answer.status)
            except (TimeoutError, aiohttp.ClientError) as error:
                ok, why = False, type(error).__name__
            phase.latencies_ms.append(1000 * (time.perf_counter() - sent))
            phase.requests += 1
            if not ok:
                phase.failed += 1
                phase.failures[why] = phase.failures.get(why, 0) + 1
            if on_progress is not None:
                on_progress(phase.requests)

    connector = aiohttp.TCPConnector(limit=clients)  # one kept-alive connection a client
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(base_url=url, connector=connector, timeout=timeout) as http:
        start = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        phase.seconds = time.perf_counter() - start
    return phase


def memory_phase(
    url: str, pid: int, bodies: list[dict[str, Any]], clients: int, total: int
) -> dict[str, Any]:
    samples = [(0, resident_mb(pid))]
    step = max(1, total // 10)

    def sample(done: int) -> None:
        if done % step == 0:
            samples.append((done, resident_mb(pid)))

    phase = asyncio.run(load(url, bodies, clients, total=total, on_progress=sample))
    samples.append((phase.requests, resident_mb(pid)))
    values = [mb for _, mb in samples]
    return {**phase.summary(), "rss_mb_start": values[0], "rss_mb_end": values[-1], "rss_mb_max": max(values),
            "rss_mb_after_first_tenth": samples[1][1] if len(samples) > 2 else values[-1],
            "samples": [{"requests": n, "rss_mb": mb} for n, mb in samples]}  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    one, many, memory, offline = (
        result["one_client"],
        result["many_clients"],
        result["memory"],
        result["offline"],
    )
    rows = [
        "| measure | value |",
        "| --- | --- |",
        f"| run | `{result['run']}` ({result['backend']}) |",
        f"| server settings | max batch {result['settings']['max_batch_size']}, "
        f"batch timeout {result['settings']['batch_timeout']} s, 1 inference worker |",
        f"| offline `Predictor.predict` (batch {offline['batch_size']}) | "
        f"{offline['throughput_eps']} examples/s |",
        f"| 1 client: throughput | {one['throughput_rps']} requests/s |",
        f"| 1 client: p50 / p99 latency | {one['p50_ms']} / {one['p99_ms']} ms |",
        f"| {many['clients']} clients: throughput | {many['throughput_rps']} requests/s |",
        f"| {many['clients']} clients: p50 / p99 latency | {many['p50_ms']} / {many['p99_ms']} ms |",
        f"| throughput {many['clients']} clients / 1 client | {result['scaling']}x |",
        f"| server / offline throughput | {result['server_vs_offline']} |",
        f"| failed requests (all phases) | {result['failed_total']} of {result['requests_total']} |",
        f"| resident memory over {memory['requests']} requests | {memory['rss_mb_start']} MB at start, "
        f"{memory['rss_mb_after_first_tenth']} MB after a tenth, {memory['rss_mb_end']} MB at the end "
        f"(max {memory['rss_mb_max']}) |",
    ]
    machine = result["machine"]
    note = (f"\n{machine['cpus']} CPUs, load average {machine['load_average']} at the start; "
            f"{result['settings']['duration']} s per load phase.\n")  # fmt: skip
    return "# tabrasa serve under load\n\n" + "\n".join(rows) + "\n" + note


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "run", nargs="?", default="runs/imdb/version_0", help="run folder (default: IMDB preset)"
    )
    parser.add_argument("--out", default="results/serve", help="folder for bench_serve.json and .md")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of each load phase")
    parser.add_argument("--memory-requests", type=int, default=10_000)
    parser.add_argument("--inputs", type=int, default=512, help="distinct inputs, sent round-robin")
    parser.add_argument("--max-batch-size", type=int, default=32)
    parser.add_argument("--batch-timeout", type=float, default=0.01)
    parser.add_argument("--onnx", action="store_true", help="serve the ONNX export (ONNX Runtime)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    predictor, raws, bodies = bench_inputs(args.run, args.inputs)
    offline = offline_throughput(predictor, raws, args.max_batch_size, min(args.duration, 20.0))
    del predictor
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    load_average = round(os.getloadavg()[0], 2)
    server = start_server(args, port, out / "bench_serve_server.log")
    try:
        asyncio.run(load(url, bodies, 4, total=64))  # warm-up
        one = asyncio.run(load(url, bodies, 1, seconds=args.duration))
        many = asyncio.run(load(url, bodies, args.clients, seconds=args.duration))
        memory = memory_phase(url, server.pid, bodies, args.clients, args.memory_requests)
    finally:
        server.send_signal(signal.SIGTERM)
        exit_status = server.wait(timeout=120)
    phases = (one.summary(), many.summary(), memory)
    result = {
        "run": args.run,
        "backend": "onnx" if args.onnx else "pytorch",
        "settings": {"max_batch_size": args.max_batch_size, "batch_timeout": args.batch_timeout,
                     "duration": args.duration, "clients": args.clients, "inputs": len(bodies)},
        "machine": {"cpus": os.cpu_count(), "load_average": load_average,
                    "python": platform.python_version()},
        "offline": offline,
        "one_client": phases[0],
        "many_clients": phases[1],
        "memory": memory,
        "scaling": round(phases[1]["throughput_rps"] / max(phases[0]["throughput_rps"], 1e-9), 2),
        "server_vs_offline": round(phases[1]["throughput_rps"] / max(offline["throughput_eps"], 1e-9), 2),
        "failed_total": sum(p["failed"] for p in phases),
        "requests_total": sum(p["requests"] for p in phases),
        "server_exit_status": exit_status,
    }  # fmt: skip
    (out / "bench_serve.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "bench_serve.md").write_text(markdown(result))
    print(markdown(result))
    return 1 if result["failed_total"] or exit_status != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
