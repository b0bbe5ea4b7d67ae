"""The suite-cost script: pytest's summary parsed, and a real child pytest run counted, failures included."""

from __future__ import annotations

from pathlib import Path

from benchmarks.bench_suite import measure, outcome_counts


def test_summary_line_counts() -> None:
    line = "= 1129 passed, 3 skipped, 1 error, 2 deselected, 5 warnings in 101.86s (0:01:41) ="
    assert outcome_counts(line) == {"passed": 1129, "skipped": 3, "errors": 1, "deselected": 2}
    assert outcome_counts("no tests ran in 0.01s") == {}


def test_a_failing_suite_is_counted_and_keeps_its_status(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text(
        "import pytest\n"
        "def test_ok():\n    assert True\n"
        "def test_bad():\n    assert False\n"
        "@pytest.mark.slow\ndef test_slow():\n    assert True\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: long\n")
    result = measure("not slow", tmp_path)
    assert result["counts"] == {"passed": 1, "failed": 1, "deselected": 1}
    assert result["returncode"] == 1
    assert result["wall_seconds"] > 0
