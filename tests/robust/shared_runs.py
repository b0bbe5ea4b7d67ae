"""Reference runs that several test files compare against, trained once per session.

Under pytest-xdist (`--dist loadfile`) two files that need the same two-process reference may land on
different workers, and a module fixture in each would train it twice: about 35 s of process starts on a
loaded core each time. Here the first worker to ask trains it under a file lock, in the folder that all
workers' temporary folders share, and every later caller reads the finished run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from tests.robust.runs import run_cli, tiny_fit

# IMDB tiny (tests/robust/runs.py TINY) on 2 CPU processes: 64 examples, batches of 8 per rank, 4 steps an
# epoch, 12 in all; last.ckpt every 3 steps (the FSDP2 kill tests pause at step 6).
TWO_RANKS = [
    "--trainer.accelerator", "cpu", "--trainer.devices", "2", "--trainer.max_epochs", "3",
    "--data.loader.batch_size", "8", "--checkpoint.every_n_train_steps", "3",
    "--trainer.log_every_n_steps", "1",
]  # fmt: skip
DDP = ["--trainer.strategy", "ddp"]


def shared_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this session sees: xdist gives each worker `<base>/popen-gwN`."""
    base = factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


def shared_cache(factory: pytest.TempPathFactory) -> Path:
    """The data cache the shared runs build (each worker's own, tests/conftest.py cache_dir, is not seen by
    the other): a run that compares with a shared one and prepares the same data reads it from here."""
    return shared_folder(factory) / "shared-runs" / "cache"


def shared_run(factory: pytest.TempPathFactory, name: str, *args: str) -> Path:
    """`tabrasa fit` with tiny_fit's settings and `args`, trained once per session; its save_dir."""
    folder = shared_folder(factory) / "shared-runs" / name
    done = folder / "finished"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / "train.lock")):  # one lock: the runs also share the data cache
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a run a crashed worker left half written
            run_cli(tiny_fit(folder, *args), TABRASA_CACHE=str(shared_cache(factory)))
            done.write_text(" ".join(args))
    return folder


def ddp_two_ranks(factory: pytest.TempPathFactory) -> Path:
    """One node, two DDP processes, dropout 0.1 as configured: the reference of the FSDP2 tests
    (tests/training/test_sharding.py) and of the two-node tests (tests/training/test_multinode.py)."""
    return shared_run(factory, "ddp-two-ranks", *TWO_RANKS, *DDP)
