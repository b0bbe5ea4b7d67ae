"""The learning-curve benchmark runs on a tiny slice, writes its outputs, and resumes without rerunning."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tabrasa.evidence.learning_curves import Point, crossover

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location(
        "bench_generalization", ROOT / "scripts" / "bench_generalization.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_crossover_is_the_fraction_from_which_the_transformer_stays_ahead() -> None:
    def pts(ours: list[float], theirs: list[float]) -> list[Point]:
        fractions = [0.1, 0.3, 1.0]
        return [Point("m", "small", f, 1, 1e-3, a, 0, 1) for f, a in zip(fractions, ours, strict=True)] + [
            Point("m", "cnn", f, 1, 1e-3, a, 0, 1) for f, a in zip(fractions, theirs, strict=True)
        ]

    assert crossover(pts([0.5, 0.7, 0.9], [0.6, 0.7, 0.8]), "m", "cnn") == 0.3
    assert crossover(pts([0.5, 0.8, 0.7], [0.6, 0.7, 0.8]), "m", "cnn") is None
    assert crossover(pts([0.9, 0.9, 0.9], [0.6, 0.7, 0.8]), "m", "cnn") == 0.1


@pytest.mark.slow
def test_smoke_sweep_writes_outputs_and_resumes(cache_dir: Path, tmp_path: Path) -> None:
    script = load_script()
    assert script.main(["--smoke", "--modalities", "text", "--out", str(tmp_path)]) == 0
    runs = (tmp_path / "runs.jsonl").read_text().splitlines()
    # 2 arms × 2 fractions × (1 rate at seed 0 + 1 more seed)
    assert len(runs) == 8
    assert all(0.0 <= json.loads(r)["test_acc"] <= 1.0 for r in runs)
    assert (tmp_path / "learning_curve_text.png").stat().st_size > 1000
    assert "| text | small |" in (tmp_path / "learning_curves.md").read_text()
    assert script.main(["--smoke", "--modalities", "text", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "runs.jsonl").read_text().splitlines() == runs, "a finished sweep reruns nothing"
