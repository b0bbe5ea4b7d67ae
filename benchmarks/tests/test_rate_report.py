"""The rate-sweep table: a winner between two losers is bracketed, a winner at the end of its grid is
flagged, a lone rate says so, and later seeds and permuted runs are not part of the sweep."""

from __future__ import annotations

from benchmarks.curves.plan import MODALITIES
from benchmarks.curves.rate_report import rate_report

TEXT = MODALITIES["text"]


def run(arm: str, fraction: float, lr: float, val: float, seed: int = 0, permuted: bool = False) -> dict:
    n_train = {0.03: 150, 1.0: 5000}[fraction]
    return {"modality": "text", "arm": arm, "fraction": fraction, "n_train": n_train, "lr": lr,
            "val_acc": val, "seed": seed, "permuted": permuted}  # fmt: skip


def test_bracketed_at_an_edge_and_alone_are_told_apart() -> None:
    rows = [
        run("transformer", 0.03, 1e-3, 0.60), run("transformer", 0.03, 3e-3, 0.70),
        run("transformer", 0.03, 9e-3, 0.65),
        run("transformer", 1.0, 1e-3, 0.80), run("transformer", 1.0, 3e-3, 0.75),
        run("lstm", 0.03, 1e-3, 0.55),
        run("transformer", 1.0, 3e-3, 0.99, seed=1), run("transformer", 1.0, 3e-3, 0.99, permuted=True),
    ]  # fmt: skip
    lines = rate_report(TEXT, rows)
    assert lines[0].startswith("### text: rate sweeps")
    body = [line for line in lines if line.startswith("| transformer") or line.startswith("| lstm")]
    assert body == [
        "| transformer | 150 | 0.001: 0.600, 0.003: 0.700, 0.009: 0.650 | 0.003 | bracketed |",
        "| transformer | 5,000 | 0.001: 0.800, 0.003: 0.750 | 0.001 | **at an edge** |",
        "| lstm | 150 | 0.001: 0.550 | 0.001 | one rate so far |",
    ]


def test_no_network_run_gives_no_table() -> None:
    assert rate_report(TEXT, [{**run("floor_tfidf", 0.03, 0.0, 0.7)}]) == []
