"""The README's result tables are what their committed sources render: a number cannot be edited in one
place and not the other."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tabrasa.evidence.readme_tables import TABLES, marked, render, stale

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_every_renderer_has_its_table_in_the_readme() -> None:
    assert sorted(marked(README)) == sorted(TABLES)


def test_readme_tables_match_their_sources() -> None:
    assert stale(README, ROOT / "results") == [], "run `python scripts/readme_tables.py` and commit"


def test_a_changed_run_card_makes_its_table_stale(tmp_path: Path) -> None:
    results = tmp_path / "results"
    bulky = shutil.ignore_patterns("*.safetensors", "*.png", "*.onnx", "*.ckpt")  # no table reads them
    shutil.copytree(ROOT / "results", results, ignore=bulky)
    assert stale(README, results) == []
    path = results / "presets" / "imdb.json"
    card = json.loads(path.read_text())
    card["test"]["test/acc"] -= 0.01
    path.write_text(json.dumps(card))
    assert stale(README, results) == ["presets"]
    assert "presets" not in stale(render(README, results), results)


def test_a_table_without_a_renderer_is_an_error() -> None:
    with pytest.raises(KeyError, match="'nonsense'"):
        render("<!-- results:nonsense -->\n| x |\n<!-- /results:nonsense -->\n", ROOT / "results")


def test_the_generality_table_is_rendered_from_its_log(tmp_path: Path) -> None:
    readme = "<!-- results:generality -->\nnot measured yet\n<!-- /results:generality -->\n"
    assert stale(readme, tmp_path) == [], "no log yet: the table says so"
    runs = [
        {"modality": "image", "arm": arm, "seed": seed, "lr": 1e-3, "lr_source": "standard curves",
         "test_acc": acc + seed / 100, "test_f1": acc, "val_acc": acc, "fit_seconds": seconds,
         "global_step": 500}
        for arm, acc, seconds in (("small", 0.80, 600.0), ("grid_cnn", 0.90, 300.0))
        for seed in (0, 1)
    ]  # fmt: skip
    (tmp_path / "generality").mkdir()
    (tmp_path / "generality" / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    assert stale(readme, tmp_path) == ["generality"]
    table = render(readme, tmp_path)
    assert "| image | grid_cnn | -10.0 | 2.00× |" in table  # transformer − baseline, and time ratio
    assert stale(table, tmp_path) == []
