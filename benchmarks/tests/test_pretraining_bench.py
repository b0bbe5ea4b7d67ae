"""The pretraining benchmark: what each arm trains on, the table and verdict from hand-written runs (the
rate chosen on validation, compute summed), and a tiny end-to-end sweep that resumes without retraining."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks.evidence.pretraining_bench import (
    ESM,
    KEY_FIELDS,
    PRETRAINING_TASKS,
    PretrainingBudget,
    PretrainingCell,
    PretrainingKey,
    finetune_args,
    pretraining_config,
    summarise_pretraining_bench,
)
from benchmarks.evidence.pretraining_report import gap_closed, pretraining_table, verdict
from benchmarks.evidence.rate_sweep import RunLog

ROOT = Path(__file__).resolve().parents[2]
BUDGET = PretrainingBudget(
    learning_rates=(1e-4, 1e-3), seeds=(0, 1), fractions=(0.1,), finetune_steps=3, pretrain_steps=2
)


def load_script() -> ModuleType:
    path = ROOT / "benchmarks" / "bench_pretraining.py"
    spec = importlib.util.spec_from_file_location("bench_pretraining", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cell(arm: str, mean: float, std: float = 0.0) -> PretrainingCell:
    return PretrainingCell(
        task="psortb", fraction=0.1, arm=arm, best_lr=1e-3, val_acc=mean, test_mean=mean, test_std=std,
        seeds=2, params=1, pretrain_seconds=0.0, finetune_seconds=1.0, total_seconds=1.0,
    )  # fmt: skip


def test_gap_closed_is_the_share_of_the_baselines_lead() -> None:
    assert gap_closed(0.80, 0.86, 0.92) == pytest.approx(0.5)
    assert gap_closed(0.80, 0.95, 0.92) == pytest.approx(1.25)  # past the baseline
    assert gap_closed(0.80, 0.78, 0.92) == pytest.approx(-1 / 6)  # worse than scratch
    assert gap_closed(0.90, 0.95, 0.85) is None  # the baseline trails: no gap
    # PSORTb at 100%: a "lead" of 0.0004 inside a 2.5-point seed spread is no gap, not a -18,800% share
    assert gap_closed(0.7930, 0.709, 0.7934, noise=0.025) is None
    assert gap_closed(0.7930, 0.709, 0.7934) == pytest.approx(-210, rel=0.01), "without noise: nonsense"


@pytest.mark.parametrize(
    ("pretrained", "std", "expected"),
    [(0.92, 0.0, "yes"), (0.86, 0.0, "partly"), (0.805, 0.0, "no"), (0.86, 0.08, "no")],
)
def test_a_difference_within_the_seeds_spread_is_not_called_one(
    pretrained: float, std: float, expected: str
) -> None:
    said = verdict(_cell("scratch", 0.80), _cell("self", pretrained, std), _cell("cnn", 0.92))
    assert said.startswith(expected), said
    assert verdict(_cell("scratch", 0.80), _cell("self", 0.9), _cell("cnn", 0.805)).startswith("no gap")


def test_self_pretraining_reads_the_labelled_fraction_of_the_tasks_own_inputs() -> None:
    task = PRETRAINING_TASKS["psortb"]
    config = pretraining_config(ROOT, task, "self", 0.1, BUDGET)
    source = config["data"]["init_args"]["source"]
    assert config["data"]["class_path"] == "tabrasa.data.unlabelled.InputsOf"
    assert source["class_path"] == "tabrasa.data.PSORTbDataModule"
    assert source["init_args"]["train_fraction"] == 0.1 and source["init_args"]["seed"] == 0
    assert source["init_args"]["tokenizer"]["class_path"] == ESM  # the pretraining preset's alphabet
    assert config["model"]["class_path"] == "tabrasa.tasks.pretraining.MaskedTokenModel"
    larger = pretraining_config(ROOT, task, "larger", 0.1, BUDGET)
    assert larger["data"]["class_path"] == "tabrasa.data.unlabelled.UnlabelledUniProt"


def test_each_arm_changes_only_what_it_names() -> None:
    def args(task: str, arm: str, export: str | None = None) -> list[str]:
        key = PretrainingKey(task=task, fraction=0.1, arm=arm, lr=3e-4, seed=1)
        return finetune_args(ROOT, PRETRAINING_TASKS[task], key, BUDGET, export)

    scratch, cnn = args("psortb", "scratch"), args("psortb", "cnn")
    assert "--model.init_args.backbone" not in scratch and "--model.init_args.pretrained" not in scratch
    assert cnn[cnn.index("--model.init_args.backbone") + 1].endswith("configs/backbone/sequence_cnn.yaml")
    for run in (scratch, cnn):  # every PSORTb arm reads the ESM alphabet, so only the weights differ
        assert run[run.index("--data.init_args.tokenizer.class_path") + 1] == ESM
    larger = args("imdb", "larger", "/exports/imdb-larger-0")
    block = json.loads(larger[larger.index("--model.init_args.pretrained") + 1])
    assert block == {"family": "tabrasa", "path": "/exports/imdb-larger-0"}
    path = "--data.init_args.tokenizer.init_args.path"  # the SubwordTokenizer reads the export's vocabulary
    assert larger[larger.index(path) + 1] == "/exports/imdb-larger-0"
    assert path not in args("imdb", "self", "/exports/imdb-self-0.1")


def test_the_table_reports_the_rate_chosen_on_validation_and_the_summed_compute(tmp_path: Path) -> None:
    log = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)
    for arm, pre in (("scratch", 0.0), ("self", 50.0), ("larger", 200.0), ("cnn", 0.0)):
        base = {"task": "psortb", "fraction": 0.1, "arm": arm, "params": 10, "pretrain_seconds": pre}
        # val prefers 1e-4, test prefers 1e-3: the table must follow validation
        log.add(base | {"lr": 1e-4, "seed": 0, "val_acc": 0.8, "test_acc": 0.70, "train_seconds": 10.0})
        log.add(base | {"lr": 1e-3, "seed": 0, "val_acc": 0.7, "test_acc": 0.90, "train_seconds": 10.0})
        log.add(base | {"lr": 1e-4, "seed": 1, "val_acc": 0.8, "test_acc": 0.74, "train_seconds": 20.0})
    cells = summarise_pretraining_bench(log, ["psortb"], BUDGET)
    assert [c.arm for c in cells] == ["scratch", "self", "larger", "cnn"]
    larger = cells[2]
    assert larger.best_lr == 1e-4 and larger.test_mean == pytest.approx(0.72) and larger.seeds == 2
    assert larger.finetune_seconds == 15.0 and larger.total_seconds == 215.0
    table = pretraining_table(cells)
    assert "| psortb | 10% | larger | 0.0001 | 0.800 | 0.720 ± 0.028 | 2 | 10 | 200 | 15 | 215 |" in table
    assert "| psortb | 10% | self | +0.0 pts | +0.0 pts | — | no gap to close" in table


@pytest.mark.slow
def test_smoke_sweep_pretrains_once_fine_tunes_every_arm_and_resumes(cache_dir: Path, tmp_path: Path) -> None:
    script = load_script()
    args = ["--smoke", "--modalities", "fashion_mnist", "--out", str(tmp_path)]
    assert script.main(args) == 0
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert {r["arm"] for r in runs} == {"scratch", "self", "larger", "cnn"}
    pretrained = [
        json.loads(line) for line in (tmp_path / "pretrained/pretraining.jsonl").read_text().splitlines()
    ]
    assert {(p["source"], p["fraction"]) for p in pretrained} == {("self", 0.5), ("larger", 0.0)}
    assert all((Path(p["export"]) / "model.safetensors").exists() for p in pretrained)
    by_arm = {r["arm"]: r for r in runs}
    assert by_arm["self"]["pretrain_seconds"] > 0 and by_arm["scratch"]["pretrain_seconds"] == 0
    assert by_arm["cnn"]["params"] != by_arm["scratch"]["params"], "the cnn arm must swap the backbone"
    assert "| fashion_mnist | 50% | cnn |" in (tmp_path / "pretraining.md").read_text()
    assert script.main(args) == 0
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == len(runs), (
        "a finished sweep reruns nothing"
    )
    again = (tmp_path / "pretrained/pretraining.jsonl").read_text().splitlines()
    assert len(again) == len(pretrained), "a finished pretraining is reused, not repeated"
