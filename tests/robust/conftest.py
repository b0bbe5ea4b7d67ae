"""One uninterrupted reference run, shared by the resume and determinism tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robust.runs import run_cli, tiny_fit

# 64 examples in batches of 16: 4 steps an epoch, 12 in all; last.ckpt every 3 steps (mid-epoch too).
REFERENCE = [
    "--trainer.max_epochs", "3", "--data.loader.batch_size", "16", "--checkpoint.every_n_train_steps", "3"
]  # fmt: skip


@pytest.fixture(scope="session")
def reference_run(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """save_dir of an uninterrupted, deterministic run (dropout 0.1 as configured)."""
    save_dir = tmp_path_factory.mktemp("reference")
    run_cli(tiny_fit(save_dir, *REFERENCE))
    return save_dir
