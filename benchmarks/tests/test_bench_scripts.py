"""The benchmark scripts: their arithmetic on hand-made rows, and end to end on tiny sizes (--smoke), with
the outputs checked against each other, so they cannot rot between full runs."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

import pytest
import torch

from benchmarks.evidence.probe import Batch
from tabrasa.backbone import TokenGrid


def load(name: str) -> ModuleType:
    return importlib.import_module(f"benchmarks.{name}")


def test_attention_summary_from_hand_made_rows() -> None:
    rows = [
        {"kind": "local", "tokens": 256, "ms": 2.0, "peak_mib": 1.0},
        {"kind": "local", "tokens": 1024, "ms": 8.0, "peak_mib": 4.0},
        {"kind": "full", "tokens": 256, "ms": 2.0, "peak_mib": 2.0},
        {"kind": "full", "tokens": 1024, "ms": 32.0, "peak_mib": 16.0},
        {"kind": "full-math", "tokens": 256, "ms": 4.0, "peak_mib": 8.0},
    ]
    summary = load("bench_attention").summarise(rows, longest=1024, base=256)
    assert summary == {
        "local_over_full_memory": 0.25,
        "full_math_memory_extrapolated_mib": 128.0,  # 8 MiB at 256 tokens, × (1024 / 256)²
        "local_over_full_math_memory_extrapolated": 4.0 / 128.0,
        "local_time_growth_256_to_1024_over_linear": 1.0,  # 4× the time for 4× the tokens
        "full_time_growth_256_to_1024_over_linear": 4.0,
    }
    assert load("bench_attention").near_square_grid(12) == TokenGrid(3, 4)


def test_throughput_ratios_from_hand_made_rows() -> None:
    def row(system: str, precision: str, tokens_per_s: float) -> dict[str, object]:
        return {
            "seq": 8,
            "mode": "train",
            "precision": precision,
            "system": system,
            "tokens_per_s": tokens_per_s,
        }

    rows = [row("tabrasa", "fp32", 300.0), row("timm", "fp32", 200.0), row("tabrasa", "bf16", 500.0)]
    load("bench_throughput").add_ratios(rows)
    assert [r["tabrasa_over_this"] for r in rows] == [1.0, 1.5, 1.0]
    assert rows[0]["over_timm_fp32"] == 1.5 and rows[2]["over_timm_fp32"] == 2.5
    assert "over_timm_fp32" not in rows[1]
    assert load("bench_throughput").parse_shapes("196x16,512x8") == [(196, 16), (512, 8)]


def test_as_grid_lays_a_cls_led_sequence_out_in_rows() -> None:
    batch = Batch(torch.tensor([[9, 1, 2, 3, 4, 5, 0]]), torch.tensor([1]))
    grid = load("bench_tasks").as_grid(batch, width=4)
    assert grid.grid == TokenGrid(2, 4, prefix=1)
    assert grid.ids.tolist() == [[9, 1, 2, 3, 4, 5, 0, 0, 0]]
    assert grid.mask is not None and grid.mask.tolist() == [[True] * 6 + [False] * 3]


@pytest.mark.slow
def test_bench_attention_smoke(tmp_path: Path) -> None:
    out, png = tmp_path / "attention.json", tmp_path / "memory.png"
    load("bench_attention").main(["--smoke", "--out", str(out), "--png", str(png)])
    result = json.loads(out.read_text())
    rows = result["scaling"]["rows"]
    assert {(r["kind"], r["tokens"]) for r in rows} == {
        (k, n) for k in ("full", "full-math", "local", "lowrank", "axial") for n in (16, 64)
    }
    assert all(len(r["rounds_ms"]) == 1 for r in rows), "--smoke times one round"
    cell = {(r["kind"], r["tokens"]): r for r in rows}
    assert result["scaling"]["summary"]["local_over_full_memory"] == pytest.approx(
        cell[("local", 64)]["peak_mib"] / cell[("full", 64)]["peak_mib"]
    )
    assert png.read_bytes()[:4] == b"\x89PNG"
    kinds = result["listops"]["kinds"]
    assert [k["attention"]["kind"] for k in kinds] == ["full", "local", "lowrank", "axial"]
    assert kinds[0]["accuracy_vs_full"] == 1.0 and kinds[0]["attention_flops_vs_full"] == 1.0
    assert all(k["accuracy_vs_full"] == pytest.approx(k["accuracy"] / kinds[0]["accuracy"]) for k in kinds)


@pytest.mark.slow
def test_bench_throughput_smoke(cache_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("timm")
    pytest.importorskip("transformers")
    out = tmp_path / "throughput.json"
    load("bench_throughput").main(["--smoke", "--out", str(out)])
    result = json.loads(out.read_text())
    rows = {(r["system"], r["mode"], r["precision"]): r for r in result["rows"]}
    assert {("tabrasa", "train", "bf16"), ("bert", "infer", "fp32"), ("tabrasa", "infer", "int8")} <= set(
        rows
    )
    ours, timm = rows[("tabrasa", "train", "fp32")], rows[("timm", "train", "fp32")]
    assert ours["tokens_per_s"] == pytest.approx(8 * 2 / (ours["ms"] / 1e3))  # --smoke: 8 tokens × batch 2
    assert ours["over_timm_fp32"] == pytest.approx(ours["tokens_per_s"] / timm["tokens_per_s"])
    bf16 = result["bf16_accuracy"]
    assert bf16["seeds"] == [0] and bf16["mean_accuracy"]["bf16"] == bf16["accuracy"]["bf16"][0]
    assert bf16["bf16_minus_fp32"] == pytest.approx(bf16["accuracy"]["bf16"][0] - bf16["accuracy"]["fp32"][0])


def test_joint_summary_counts_a_joint_run_once_and_gaps_against_both_separate_arms(tmp_path: Path) -> None:
    bench = load("bench_joint")
    rows = [
        {"arm": "separate", "task": "a", "test_acc": 0.5, "train_seconds": 10.0, "steps": 4},
        {"arm": "separate", "task": "b", "test_acc": 0.7, "train_seconds": 30.0, "steps": 4},
        {"arm": "joint", "task": "a", "test_acc": 0.6, "train_seconds": 44.0, "steps": 4},
        {"arm": "joint", "task": "b", "test_acc": 0.6, "train_seconds": 44.0, "steps": 4},
        {"arm": "separate@wall", "task": "a", "test_acc": 0.55, "train_seconds": 22.0, "steps": 9},
        {"arm": "separate@wall", "task": "b", "test_acc": 0.8, "train_seconds": 22.0, "steps": 3},
    ]
    log = tmp_path / "runs.jsonl"
    log.write_text("".join(json.dumps({"fraction": 1.0, "seed": 0, **r}) + "\n" for r in rows))
    table = bench.summarise(log)
    assert "| a | 0.500 (4) | 0.600 (4) | 0.550 (9) | +10.0 pts | +5.0 pts |" in table
    assert "| b | 0.700 (4) | 0.600 (4) | 0.800 (3) | -10.0 pts | -20.0 pts |" in table
    assert "| training loop, all seeds | 40 s | 44 s | 44 s |" in table  # the joint run counted once
    assert bench.loop_seconds_of(log, "joint", 1.0, 0) == {"": 44.0}
    assert bench.loop_seconds_of(log, "separate", 1.0, 0) == {"a": 10.0, "b": 30.0}
    with pytest.raises(SystemExit, match=r"joint arm of fraction=0\.1"):
        bench.loop_seconds_of(log, "joint", 0.1, 0)


@pytest.mark.slow
def test_bench_joint_end_to_end_trains_the_separate_and_joint_arms(cache_dir: Path, tmp_path: Path) -> None:
    bench = load("bench_joint")
    # separate@wall is the separate arm at other step counts: its arithmetic is checked on a hand-made log
    # below, and its four fits here would double this test's time. The task-embedding arm differs from
    # "joint" by one model flag (tests/tasks/test_joint.py trains it).
    arms = ["separate", "joint"]
    argv = ["--steps", "2", "--seeds", "0", "--fractions", "1.0", "--limit", "32", "--arms", *arms]
    bench.main([*argv, "--out", str(tmp_path)])
    rows = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    by = {(r["arm"], r["task"]): r for r in rows}
    tasks = ["imdb", "fashion_mnist", "keywords", "psortb"]
    assert {arm for arm, _ in by} == set(arms) and {task for _, task in by} == set(tasks)
    for task in tasks:
        assert by[("separate", task)]["steps"] == 2 and by[("joint", task)]["steps"] == 2
        assert by[("separate", task)]["train_seconds"] > 0
        assert 0.0 <= by[("joint", task)]["test_acc"] <= 1.0
    command = "python -m benchmarks.bench_joint " + " ".join(argv)
    assert (tmp_path / "table.md").read_text().startswith(f"`{command} --out {tmp_path}`")


def test_separate_at_wall_gives_each_task_an_even_share_of_the_joint_wall_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bench = load("bench_joint")
    log = tmp_path / "runs.jsonl"
    # The joint run took 80 s for 4 tasks (20 s each); separately, 10 steps took each task these seconds.
    seconds = {"imdb": 10.0, "fashion_mnist": 40.0, "keywords": 20.0, "psortb": 400.0}
    rows = [{"arm": "joint", "fraction": 1.0, "seed": 0, "task": t, "train_seconds": 80.0} for t in seconds]
    rows += [
        {"arm": "separate", "fraction": 1.0, "seed": 0, "task": t, "train_seconds": s}
        for t, s in seconds.items()
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    budgets: list[list[str]] = []

    def fake_train(config: dict, budget: list[str]) -> tuple[dict[str, float], float, int]:
        budgets.append(budget)
        return {"test/acc": 0.5, "test/f1": 0.5}, 1.0, int(budget[-1])

    monkeypatch.setattr(bench, "train_and_score", fake_train)
    out = bench.run_arm("separate@wall", 1.0, 0, steps=10, limit=32, log=log)
    # 20 s each: 10 steps × 20 / 10 = 20, × 20 / 40 = 5, × 20 / 20 = 10, × 20 / 400 = 0.5 → at least 1
    steps = {r["task"]: r["steps"] for r in out}
    assert steps == {"imdb": 20, "fashion_mnist": 5, "keywords": 10, "psortb": 1}
    assert all(b[0] == "--trainer.max_steps" for b in budgets)


def test_counter_separate_at_wall_without_its_reference_runs_names_the_arm_to_run_first(
    tmp_path: Path,
) -> None:
    log = tmp_path / "runs.jsonl"
    with pytest.raises(SystemExit, match=r"needs the joint arm of fraction=1\.0 seed=0 first"):
        load("bench_joint").run_arm("separate@wall", 1.0, 0, steps=10, limit=32, log=log)


def test_bench_mixers_writes_each_family_at_each_length_with_its_whole_command(tmp_path: Path) -> None:
    out = tmp_path / "scaling.json"
    argv = ["--smoke", "--families", "full", "mamba", "--out", str(out)]
    result = load("bench_mixers").main(argv)
    assert json.loads(out.read_text())["rows"] == result["rows"]
    assert {row["family"] for row in result["rows"]} == {"full", "mamba"}
    assert result["command"] == "python -m benchmarks.bench_mixers " + " ".join(argv)


def test_bench_scan_chunk_times_each_buffer_size_and_names_the_fastest(tmp_path: Path) -> None:
    out = tmp_path / "chunk.json"
    result = load("bench_scan_chunk").main(["--smoke", "--out", str(out)])
    assert json.loads(out.read_text())["rows"] == result["rows"]
    (row,) = result["rows"]  # 2 × 9 tokens × 8 channels × state 16: 256 numbers a step
    assert row["chunk"] == {"16": 1, "1024": 4}  # the buffer size sets the chunk length
    assert row["fastest"] == min(
        (int(k) for k in row["milliseconds"]), key=lambda k: row["milliseconds"][str(k)]
    )
    assert row["default_over_fastest"] is None  # the default size was not among those timed


def test_bench_mamba_scan_times_every_path_of_one_model(tmp_path: Path) -> None:
    out = tmp_path / "scan.json"
    result = load("bench_mamba_scan").main(["--smoke", "--out", str(out)])
    # the whole command line, so the file says how to recreate its shapes (not only where it went)
    assert result["command"] == f"python -m benchmarks.bench_mamba_scan --smoke --out {out}"
    assert json.loads(out.read_text())["rows"] == result["rows"]
    (row,) = result["rows"]
    assert set(row["seconds"]) == {"parallel", "sequential", "chunked"}
    seconds = row["seconds"]
    assert row["chunked_speedup"] == pytest.approx(
        {path: seconds[path] / seconds["chunked"] for path in ("parallel", "sequential")}
    )
    assert result["command"].endswith(f"--out {out}")


def test_bench_vocabulary_order_counts_one_vocabulary_for_tabrasa(tmp_path: Path) -> None:
    out = tmp_path / "order.json"
    result = load("bench_vocabulary_order").main(["--smoke", "--out", str(out)])
    assert json.loads(out.read_text()) == result
    assert result["command"] == f"python -m benchmarks.bench_vocabulary_order --smoke --out {out}"
    ours = [row for row in result["rows"] if row["trainer"] == "tabrasa"]
    assert {row["kind"] for row in ours} == {"wordpiece", "bpe"}
    assert all(row["distinct_token_sets"] == row["distinct_id_maps"] == 1 for row in ours)
    # The library alone numbers its pieces differently in 3 trainings: what the count is there to show.
    assert any(row["distinct_id_maps"] > 1 for row in result["rows"] if row["trainer"] != "tabrasa")
