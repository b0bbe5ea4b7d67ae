"""The result tables of the README and of the docs pages are what their committed sources render: a number
cannot be edited in one place and not the other."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchmarks import readme_tables
from benchmarks.evidence.readme_tables import (
    TABLES,
    documents,
    marked,
    render,
    render_documents,
    stale,
    stale_documents,
)

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_every_renderer_has_its_table_on_some_page() -> None:
    shown = {name for path in documents(ROOT) for name in marked(path.read_text())}
    assert shown == set(TABLES)
    assert "presets" in marked(README)


def test_every_page_table_matches_its_sources() -> None:
    found = stale_documents(ROOT, ROOT / "results")
    assert found == {}, "run `python -m benchmarks.readme_tables` and commit"


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


def _checkout(tmp_path: Path, page: str) -> Path:
    """A checkout with a README without tables and one docs page, two folders deep, holding `page`."""
    root = tmp_path / "checkout"
    (root / "docs" / "evidence").mkdir(parents=True)
    (root / "README.md").write_text("# tabrasa\n")
    (root / "docs" / "evidence" / "presets.md").write_text(page)
    return root


def test_a_table_in_a_docs_page_is_checked_and_rewritten(tmp_path: Path) -> None:
    empty = tmp_path / "no-results"
    empty.mkdir()
    page = render("# Presets\n\n<!-- results:presets -->\n<!-- /results:presets -->\n", empty)
    root = _checkout(tmp_path, page)
    shown = [p.relative_to(root).as_posix() for p in documents(root)]
    assert shown == ["README.md", "docs/evidence/presets.md"]
    assert stale_documents(root, empty) == {}, "rendered from these sources: fresh"
    assert render_documents(root, ROOT / "results") == ["docs/evidence/presets.md"]
    text = (root / "docs" / "evidence" / "presets.md").read_text()
    assert text == render(page, ROOT / "results")
    assert "`results/presets/imdb.json`" in text, "the committed run card, not 'not measured yet'"
    assert stale_documents(root, ROOT / "results") == {}
    assert render_documents(root, ROOT / "results") == [], "nothing left to rewrite"


def test_counter_a_stale_table_in_a_docs_page_is_reported(tmp_path: Path) -> None:
    empty = tmp_path / "no-results"
    empty.mkdir()
    # rendered with no run cards ("not measured yet"), checked against the committed ones: stale
    root = _checkout(tmp_path, render("<!-- results:presets -->\n<!-- /results:presets -->\n", empty))
    assert stale_documents(root, ROOT / "results") == {"docs/evidence/presets.md": ["presets"]}


def test_the_entry_point_checks_and_rewrites_docs_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "no-results"
    empty.mkdir()
    root = _checkout(tmp_path, render("<!-- results:presets -->\n<!-- /results:presets -->\n", empty))
    results = ["--root", str(root), "--results", str(ROOT / "results")]
    assert readme_tables.main(["--check", *results]) == 1
    assert "stale tables in docs/evidence/presets.md: presets" in capsys.readouterr().out
    assert readme_tables.main(results) == 0
    assert readme_tables.main(["--check", *results]) == 0


def test_one_table_twice_on_a_page_checks_each_copy(tmp_path: Path) -> None:
    fresh = render("<!-- results:presets -->\n<!-- /results:presets -->\n", ROOT / "results")
    edited = fresh.replace("| IMDB reviews", "| IMDb reviews", 1)
    assert edited != fresh
    assert stale(fresh + "\n" + fresh, ROOT / "results") == []
    assert stale(fresh + "\n" + edited, ROOT / "results") == ["presets"]


def test_an_unknown_table_on_a_docs_page_names_the_page(tmp_path: Path) -> None:
    root = _checkout(tmp_path, "<!-- results:nonsense -->\n| x |\n<!-- /results:nonsense -->\n")
    message = "docs/evidence/presets.md: a page marks a table 'nonsense'"
    with pytest.raises(KeyError, match=re.escape(message)):
        stale_documents(root, ROOT / "results")
