"""Committed results name no absolute path of the machine that made them."""

from __future__ import annotations

from pathlib import Path

from benchmarks.relative_paths import main, offenders, relative, rewrite

ROOT = Path(__file__).resolve().parents[2]


def test_no_committed_result_holds_an_absolute_path() -> None:
    assert not offenders(ROOT), [str(p.relative_to(ROOT)) for p in offenders(ROOT)]


def test_paths_become_relative_to_the_repository_or_the_run_folder() -> None:
    assert relative("/work/measB/configs/backbone/small.yaml") == "configs/backbone/small.yaml"
    assert (
        relative("/tmp/x/imdb/version_0/checkpoints/best-1-2.ckpt")
        == "runs/imdb/version_0/checkpoints/best-1-2.ckpt"
    )
    assert relative("/tmp/exp/reviews.txt") == "<tmp>/reviews.txt"
    assert rewrite('{"config": "/tmp/a/b/version_3/config.yaml", "n": 1}') == (
        '{"config": "runs/b/version_3/config.yaml", "n": 1}'
    )


def test_counter_a_planted_absolute_path_is_reported_then_rewritten(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    card = tmp_path / "results" / "card.json"
    card.write_text('{"config": "/root/runs/x/version_0/config.yaml"}\n')
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert "/root" not in card.read_text()


def test_files_git_ignores_are_not_checked_but_committed_ones_are(tmp_path: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("results/local/\n")
    (tmp_path / "results" / "local").mkdir(parents=True)
    (tmp_path / "results" / "local" / "run_card.json").write_text('{"config": "/work/x/configs/a.yaml"}\n')
    assert offenders(tmp_path) == []  # an ignored local run folder is never committed
    kept = tmp_path / "results" / "card.json"  # counter-test: a file git would commit is checked
    kept.write_text('{"config": "/work/x/configs/a.yaml"}\n')
    assert offenders(tmp_path) == [kept]
