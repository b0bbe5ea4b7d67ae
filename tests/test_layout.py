"""The package layout must never shadow Hugging Face's `tokenizers` when Python runs from the repo root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_tokenizers_from_repo_root_finds_hugging_face() -> None:
    code = "import tokenizers, sys; print(tokenizers.__file__); assert hasattr(tokenizers, 'Tokenizer')"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "site-packages" in out.stdout or "dist-packages" in out.stdout
    assert not (ROOT / "tokenizers").exists(), "a top-level tokenizers/ folder would shadow Hugging Face's"


def test_package_folders_follow_the_data_flow() -> None:
    for folder in ("tabrasa/tokenizers", "tabrasa/backbone", "tabrasa/tasks", "configs", "tests", "scripts"):
        assert (ROOT / folder).is_dir(), folder


def test_backbone_imports_nothing_from_tokenizers_or_tasks() -> None:
    for path in (ROOT / "tabrasa" / "backbone").glob("*.py"):
        imports = [line for line in path.read_text().splitlines() if line.startswith(("from ", "import "))]
        for line in imports:
            assert "tabrasa.tasks" not in line and "tabrasa.tokenizers" not in line, f"{path.name}: {line}"
