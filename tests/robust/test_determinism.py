"""The same config and seed give the same metrics and weights, run to run, on CPU, and on a machine that
builds its data cache afresh (the vocabulary trained again)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.robust.conftest import REFERENCE
from tests.robust.runs import metrics, run_cli, tiny_fit, version_dir, weights


@pytest.mark.slow
def test_two_runs_with_one_seed_log_identical_metrics_and_weights(
    reference_run: Path, tmp_path: Path
) -> None:
    # An empty cache, as on another machine: the vocabulary is trained again and must come out the same
    # (tabrasa/tokenizers/trainer_order.py); with tokenizers' trainer alone its ids differed run to run.
    run_cli(tiny_fit(tmp_path, *REFERENCE), TABRASA_CACHE=str(tmp_path / "fresh-cache"))
    assert list((tmp_path / "fresh-cache").rglob("vocab-*.json")), "the run did not train its own vocabulary"
    first, second = metrics(reference_run), metrics(tmp_path)
    assert len(first) >= 3 and any(row.get("val/acc") for row in first)
    assert first == second  # every logged number, as text: bit-identical
    assert (version_dir(reference_run, 0) / "metrics.csv").read_bytes() == (
        version_dir(tmp_path, 0) / "metrics.csv"
    ).read_bytes()
    a, b = weights(reference_run), weights(tmp_path)
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_another_seed_gives_other_weights(reference_run: Path, tmp_path: Path) -> None:
    """The comparison above can fail: the seed does reach the weights and the data order."""
    run_cli(tiny_fit(tmp_path, *REFERENCE, "--seed_everything", "1"))
    a, b = weights(reference_run), weights(tmp_path)
    assert not all(torch.equal(a[k], b[k]) for k in a)
