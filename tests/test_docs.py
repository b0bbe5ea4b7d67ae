"""The docs: the site builds in MkDocs' strict mode (no broken link, anchor or page left out of the nav), and
the README stays a short tour in a fixed order of sections whose links all lead somewhere."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.availability import require_module

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250
# The README's `## ` sections, in order; what the project is comes before the first of them.
README_SECTIONS = (
    "Install",
    "Quickstart",
    "The presets",
    "Pretrained weights",
    "Your own data",
    "Commands",
    "The Python API",
    "How it is built",
    "What the evidence shows",
    "Tests and contributing",
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_problems(text: str) -> list[str]:
    """What keeps a README from being the short tour: its length, its sections, its markers, its order."""
    problems = []
    lines = text.splitlines()
    if len(lines) > README_MAX_LINES:
        problems.append(f"{len(lines)} lines, more than {README_MAX_LINES}: move detail to a docs/ page")
    if not lines or not lines[0].startswith("# "):
        problems.append("the first line is not the project's `# ` title")
    sections = tuple(line[3:].strip() for line in lines if line.startswith("## "))
    if sections != README_SECTIONS:
        problems.append(f"sections {list(sections)}, expected {list(README_SECTIONS)}")
    if "<!-- results:presets -->" not in text:
        problems.append("the generated presets table (<!-- results:presets -->) is missing")
    elif "The presets" in sections and not _inside(text, "The presets", "<!-- results:presets -->"):
        problems.append("the presets table is not in the section 'The presets'")
    return problems


def _inside(text: str, section: str, needle: str) -> bool:
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    return needle in text[start : end if end != -1 else len(text)]


def broken_links(markdown: Path, root: Path) -> list[str]:
    """Relative links of a Markdown file outside docs/ (the README) whose target file does not exist."""
    found = []
    for target in LINK.findall(markdown.read_text()):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor of the same file
        path = (markdown.parent / target.split("#")[0]).resolve()
        if not path.exists() or root not in path.parents:
            found.append(target)
    return found


def build_site(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    require_module("mkdocs", "the docs builder: pip install mkdocs-material")
    require_module("material", "the docs theme: pip install mkdocs-material")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def test_readme_is_short_and_in_order() -> None:
    assert readme_problems((ROOT / "README.md").read_text()) == []


def test_counter_a_long_or_reordered_readme_is_caught() -> None:
    text = (ROOT / "README.md").read_text()
    long = text + "more detail\n" * README_MAX_LINES
    assert any("more than 250" in problem for problem in readme_problems(long))
    swapped = text.replace("## Install\n", "## Placeholder\n").replace("## Commands\n", "## Install\n")
    assert any(problem.startswith("sections ") for problem in readme_problems(swapped))
    moved = text.replace("<!-- results:presets -->", "").replace("<!-- /results:presets -->", "")
    assert any("presets table" in problem for problem in readme_problems(moved))


def test_every_readme_link_leads_to_a_file() -> None:
    assert broken_links(ROOT / "README.md", ROOT) == []


def test_counter_a_readme_link_to_a_missing_page_is_caught(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "data.md").write_text("# Data\n")
    readme = tmp_path / "README.md"
    readme.write_text("[Data](docs/data.md), [site](https://example.org), [gone](docs/gone.md#x)\n")
    assert broken_links(readme, tmp_path) == ["docs/gone.md#x"]


@pytest.mark.slow
def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    done = build_site(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "evidence" / "learning-curves" / "index.html").exists()


@pytest.mark.slow
def test_counter_a_broken_link_or_an_orphan_page_fails_the_build(tmp_path: Path) -> None:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    with (tmp_path / "docs" / "data.md").open("a") as page:
        page.write("\n[a results file](../results/claims.md) and [a heading](index.md#no-such-heading)\n")
    (tmp_path / "docs" / "orphan.md").write_text("# In no nav\n")
    done = build_site(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    log = done.stdout + done.stderr
    assert "'../results/claims.md'" in log
    assert "#no-such-heading" in log
    assert "orphan.md" in log
