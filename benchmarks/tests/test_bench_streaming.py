"""The streaming benchmark's verdicts from hand-made rows, and a counter-case where they must fail."""

from __future__ import annotations

from typing import Any

from benchmarks.bench_streaming import markdown, summarise


def row(kind: str, size: int, rate: float, peak: float) -> dict[str, Any]:
    return {"kind": kind, "size": size, "examples_per_s": rate, "iteration_peak_rss_mib": peak,
            "iteration_peak_anon_mib": peak - 100, "iteration_peak_file_mib": 100.0}  # fmt: skip


def test_flat_memory_and_faster_streaming_pass() -> None:
    rows = [row("memory", 100, 400.0, 1000.0), row("memory", 1000, 380.0, 1300.0),
            row("streaming", 100, 3000.0, 950.0), row("streaming", 100, 3200.0, 960.0),
            row("streaming", 1000, 3100.0, 1000.0)]  # fmt: skip
    summary = summarise(rows, [100, 1000])
    assert summary["memory_peak_rss_growth"] == 0.3
    assert summary["streaming_peak_rss_growth"] == round(1000.0 / 955.0 - 1, 4)  # median of two rounds
    assert summary["streaming_over_memory_throughput_100"] == round(3100.0 / 400.0, 3)
    assert summary["rss_flat_within_10pct"] and summary["throughput_at_least_90pct"]
    assert summary["memory_peak_anon_added_mib"] == 300.0 and summary["memory_peak_file_added_mib"] == 0.0
    table = markdown({"rounds": rows, "summary": summary})
    assert "| streaming | 1,000 | 3,100 | 1,000 MiB | 900 MiB | 100 MiB |" in table


def test_counter_growing_memory_or_slow_streaming_fails() -> None:
    rows = [row("memory", 100, 400.0, 1000.0), row("memory", 1000, 400.0, 1000.0),
            row("streaming", 100, 350.0, 1000.0), row("streaming", 1000, 400.0, 1200.0)]  # fmt: skip
    summary = summarise(rows, [100, 1000])
    assert not summary["rss_flat_within_10pct"] and not summary["throughput_at_least_90pct"]
