"""benchmarks/bench_serve.py end to end on a tiny run: a few seconds per phase, and what it writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve.launch import ROOT

pytestmark = pytest.mark.slow


def test_the_benchmark_writes_its_numbers_and_counts_no_failure(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "serve"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_serve", str(trained["text"]), "--out", str(out),
         "--duration", "2", "--clients", "4", "--memory-requests", "200", "--inputs", "16"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((out / "bench_serve.json").read_text())
    assert result["failed_total"] == 0 and result["server_exit_status"] == 0
    assert result["memory"]["requests"] == 200 and len(result["memory"]["samples"]) >= 3
    for phase in ("one_client", "many_clients"):
        assert result[phase]["requests"] > 0 and result[phase]["p99_ms"] >= result[phase]["p50_ms"] > 0
    assert result["offline"]["throughput_eps"] > 0 and result["scaling"] > 0
    assert "| 4 clients: throughput |" in (out / "bench_serve.md").read_text()
