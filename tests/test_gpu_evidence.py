"""scripts/gpu_evidence.sh, the GPU evidence as one prepared run, checked end to end on CPU with --tiny."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch

from tests.robust.runs import child_env

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_evidence.sh"


def run(out: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # child_env: the script's DDP and FSDP2 parts run on gloo, bound to loopback like every test's runs.
    environment = child_env(OUT_DIR=str(out), **env)
    return subprocess.run(["bash", str(SCRIPT), *args], env=environment, capture_output=True, text=True)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the script would use it")
def test_without_a_gpu_the_full_run_stops_and_says_why(tmp_path: Path) -> None:
    done = run(tmp_path / "gpu")
    assert done.returncode == 2 and "no CUDA device" in done.stderr and "--tiny" in done.stderr
    assert not (tmp_path / "gpu").exists(), "nothing is written before the device is checked"


def test_an_unknown_step_is_refused(tmp_path: Path) -> None:
    done = run(tmp_path / "gpu", "--tiny", STEPS="9")
    assert done.returncode == 2 and "unknown step 9" in done.stderr


@pytest.mark.slow
def test_tiny_run_writes_every_part(cache_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "gpu"
    # Step 4 is scripts/gpu_sharding.py, run end to end on CPU by tests/training/test_sharding.py; running it
    # here again would cost the suite a minute and check nothing more.
    done = run(out, "--tiny", STEPS="1 2 3 5 6")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "gpu_sharding" not in done.stdout + done.stderr and not (out / "sharding.json").exists()
    throughput = json.loads((out / "throughput.json").read_text())
    assert throughput["environment"]["device"] == "cpu"
    systems = {(r["system"], r["precision"]) for r in throughput["rows"]}
    assert {("tabrasa", "bf16"), ("timm", "bf16"), ("tabrasa", "fp32")} <= systems
    assert all(r["mfu"] is not None and r["mfu"] > 0 for r in throughput["rows"])
    assert (out / "curves" / "runs.jsonl").read_text().strip()
    assert (out / "curves" / "points.csv").read_text().startswith("modality,arm,fraction")
    card = json.loads((out / "imdb_one_epoch.json").read_text())
    assert card["global_step"] == 2 and "test/acc" in card["test"]
    mixers = json.loads((out / "mixers.json").read_text())
    assert mixers["settings"]["precision"] == "bf16" and mixers["settings"]["device"] == "cpu"
    families = {"full", "local", "mamba", "mamba_parallel", "gau", "flash", "ode"}
    assert {r["family"] for r in mixers["rows"]} == families
    preset = json.loads((out / "presets" / "fashion_mnist_mamba.json").read_text())
    assert preset["global_step"] == 2 and "test/acc" in preset["test"]
    assert preset["command"][:4] == ["tabrasa", "fit", "--config", "configs/image/fashion_mnist_mamba.yaml"]
    assert (out / "nvidia_smi.txt").exists() and (out / "commit.txt").exists()
