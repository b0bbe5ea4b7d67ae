"""Shared fixtures: a fixed seed, an isolated data cache, no network."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data cache for the whole session, so tokenised IMDB slices are built once."""
    path = tmp_path_factory.mktemp("tabrasa-cache")
    os.environ["TABRASA_CACHE"] = str(path)
    return path
