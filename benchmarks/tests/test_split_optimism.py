"""The split-optimism benchmark: its resume per fit, where the default split's card goes, and its table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import bench_split_optimism
from benchmarks.evidence.readme_tables import split_optimism_table


def card(acc: float, test: int) -> dict[str, Any]:
    return {
        "test": {"test/acc": acc, "test/f1": acc / 2},
        "data": {"split_sizes": {"train": 800, "validation": 100, "test": test}},
        "hardware": {"load_average_1min": 2.0, "torch_threads": 2, "cpus": 2},
        "fit_seconds": 60.0,
        "global_step": 100,
    }


def test_a_kept_card_is_not_trained_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = bench_split_optimism.card_path(tmp_path, "psortb", "random")
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps(card(0.8, 1000)))
    trained: list[str] = []

    def fake_run(config: Path, runs: Path, out: Path, extra: list[str]) -> dict[str, Any]:
        trained.append(extra[-1])
        return card(0.7, 1000)

    monkeypatch.setattr(bench_split_optimism, "run", fake_run)
    (tmp_path / "presets").mkdir()
    for split in ("random", "homology"):
        bench_split_optimism.fit_split("psortb", split, tmp_path, tmp_path / "runs")
    assert trained == ["homology"]  # the random card was there already
    # the homology split is the preset's default, so its card is also the preset's
    assert json.loads((tmp_path / "presets" / "psortb.json").read_text())["test"]["test/acc"] == 0.7
    assert json.loads(kept.read_text())["test"]["test/acc"] == 0.8  # the kept card is left as it was


def test_table_gives_wilson_intervals_and_the_gap(tmp_path: Path) -> None:
    (tmp_path / "homology").mkdir()
    (tmp_path / "homology" / "psortb-random.json").write_text(json.dumps(card(0.85, 1000)))
    (tmp_path / "homology" / "psortb-homology.json").write_text(json.dumps(card(0.75, 1000)))
    table = split_optimism_table(tmp_path)
    rows = {line.split(" | ")[1]: line for line in table.splitlines() if line.startswith("| PSORTb")}
    assert "85.0% [82.7%, 87.1%]" in rows["random"]  # Wilson at 850 of 1000
    assert "+10.0 points" in rows["homology"]
    assert "not measured yet" in table  # UniProt has no cards here
