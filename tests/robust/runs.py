"""Launching tiny `tabrasa fit` runs in subprocesses and reading back what they wrote."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from tabrasa.training import load_checkpoint

ROOT = Path(__file__).resolve().parents[2]

# IMDB, 64 examples per split, 32 tokens, a 32-wide 2-layer backbone: about a second of training per epoch.
TINY = [
    "--config", "configs/text/imdb.yaml",
    "--data.limit", "64",
    "--data.tokenizer.init_args.max_length", "32",
    "--data.tokenizer.init_args.vocab_size", "300",
    "--data.loader.num_workers", "0",
    "--model.init_args.backbone.init_args.config.dim", "32",
    "--model.init_args.backbone.init_args.config.max_len", "32",
    "--trainer.enable_progress_bar", "false",
    "--trainer.enable_model_summary", "false",
    "--trainer.deterministic", "true",
    "--test_after_fit", "false",
]  # fmt: skip


def tiny_fit(save_dir: Path, *extra: str) -> list[str]:
    return ["fit", *TINY, "--trainer.logger.init_args.save_dir", str(save_dir), *extra]


def callback_arg(class_name: str, **init_args: Any) -> str:
    spec = {"class_path": f"tests.robust.callbacks.{class_name}", "init_args": init_args}
    return f"--trainer.callbacks+={json.dumps(spec)}"


def _command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "tabrasa.cli", *args]


# Variables a launcher sets: inherited, they would point a run at another job's rendezvous.
LAUNCH_VARIABLES = (
    "MASTER_ADDR",
    "MASTER_PORT",
    "NODE_RANK",
    "LOCAL_RANK",
    "RANK",
    "WORLD_SIZE",
    "GROUP_RANK",
)


def child_env(**variables: str) -> dict[str, str]:
    """The environment every test subprocess that trains gets (`variables` on top of it)."""
    # The session's cache (tests/conftest.py cache_dir) so the vocabulary and token ids are built once.
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES and not k.startswith("SLURM_")}
    # One thread a process: two DDP ranks beside the other pytest worker would otherwise oversubscribe the
    # cores, and gloo's collectives slow down by orders of magnitude. Gloo binds to the loopback device, not
    # to whatever address the machine's hostname resolves to (on some CI hosts one that is not reachable).
    # The same thread count in every run also keeps runs that a test compares bit for bit on the same kernels.
    return {**env, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo", **variables}


def run_cli(args: list[str], timeout: float = 300, **variables: str) -> str:
    out = subprocess.run(
        _command(args), cwd=ROOT, env=child_env(**variables), capture_output=True, text=True, timeout=timeout
    )
    assert out.returncode == 0, f"tabrasa {' '.join(args[:1])} failed:\n{out.stderr[-4000:]}"
    return out.stdout + out.stderr


def start_cli(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    handle = open(log, "wb")  # noqa: SIM115 (closed by the child's exit; the test reads it after)
    return subprocess.Popen(
        _command(args), cwd=ROOT, env=child_env(), stdout=handle, stderr=subprocess.STDOUT
    )


def wait_for(marker: Path, process: subprocess.Popen[bytes], log: Path, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if process.poll() is not None:
            raise AssertionError(f"the run ended before {marker.name}:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"no {marker.name} after {timeout} s:\n{log.read_text()[-4000:]}")
        time.sleep(0.1)


def version_dir(save_dir: Path, version: int) -> Path:
    return save_dir / "imdb" / f"version_{version}"


def last_checkpoint(save_dir: Path, version: int = 0) -> dict[str, Any]:
    return load_checkpoint(version_dir(save_dir, version) / "checkpoints" / "last.ckpt")


def weights(save_dir: Path, version: int = 0) -> dict[str, torch.Tensor]:
    return last_checkpoint(save_dir, version)["state_dict"]


def metrics(save_dir: Path, version: int = 0) -> list[dict[str, str]]:
    with open(version_dir(save_dir, version) / "metrics.csv") as handle:
        return list(csv.DictReader(handle))


def last_value(rows: list[dict[str, str]], key: str) -> float:
    return float([row[key] for row in rows if row.get(key)][-1])
