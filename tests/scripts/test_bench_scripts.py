"""The benchmark scripts run end to end on tiny sizes (--smoke), so they cannot rot between full runs."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_attention_smoke(tmp_path: Path) -> None:
    out, png = tmp_path / "attention.json", tmp_path / "memory.png"
    load("bench_attention").main(["--smoke", "--out", str(out), "--png", str(png)])
    result = json.loads(out.read_text())
    kinds = {r["kind"] for r in result["scaling"]["rows"]}
    assert kinds == {"full", "full-math", "local", "lowrank", "axial"}
    assert all(r["ms"] > 0 and r["peak_mib"] > 0 for r in result["scaling"]["rows"])
    assert "local_over_full_memory" in result["scaling"]["summary"]
    assert png.stat().st_size > 1000
    assert [k["attention"]["kind"] for k in result["listops"]["kinds"]] == [
        "full",
        "local",
        "lowrank",
        "axial",
    ]
    assert all(0 <= k["accuracy"] <= 1 for k in result["listops"]["kinds"])


@pytest.mark.slow
def test_bench_throughput_smoke(tmp_path: Path) -> None:
    pytest.importorskip("timm")
    pytest.importorskip("transformers")
    out = tmp_path / "throughput.json"
    load("bench_throughput").main(["--smoke", "--out", str(out)])
    result = json.loads(out.read_text())
    cells = {(r["system"], r["mode"], r["precision"]) for r in result["rows"]}
    assert ("tabrasa", "train", "bf16") in cells and ("bert", "infer", "fp32") in cells
    assert ("tabrasa", "infer", "int8") in cells
    ours = next(
        r for r in result["rows"] if (r["system"], r["mode"], r["precision"]) == ("tabrasa", "train", "fp32")
    )
    assert ours["over_timm_fp32"] > 0 and ours["tabrasa_over_this"] == 1.0
    assert 0 < result["bf16_accuracy"]["mean_accuracy"]["bf16"] <= 1
