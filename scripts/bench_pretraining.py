"""Does self-pretraining help the transformer at small labelled data? A reduced, CPU-sized comparison.

For each task at `--fraction` of its labelled training set and each seed, two arms:
  scratch      fine-tune the task's own config from random weights for `--finetune-steps`;
  self         masked modelling on the *same* training inputs without labels (InputsOf) for
               `--pretrain-steps`, then the same fine-tuning from that backbone and embedder.
Both arms use the task's shipped config (backbone, tokenizer, optimiser), changed only in budget, fraction,
seed and (PSORTb) the ESM tokenizer class in both arms, through the same `build_cli` users run.
Test accuracy of the best-on-validation checkpoint and wall seconds (pretraining + fine-tuning) per arm go
to results/pretraining/bench.json.

    nice -n 5 python scripts/bench_pretraining.py --tasks fashion_mnist psortb --seeds 0
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from tabrasa.cli import build_cli

ROOT = Path(__file__).resolve().parents[1]
TASKS = {"fashion_mnist": "configs/image/fashion_mnist.yaml", "psortb": "configs/protein/psortb.yaml"}
PRETRAIN = {"fashion_mnist": "configs/pretrain/image.yaml", "psortb": "configs/pretrain/protein.yaml"}


def load(path: str) -> dict[str, Any]:
    config = yaml.safe_load((ROOT / path).read_text())
    backbone = config["model"]["init_args"]["backbone"]
    if isinstance(backbone, str):  # inline the shared backbone so the temporary config stands alone
        config["model"]["init_args"]["backbone"] = yaml.safe_load(
            (ROOT / path).parent.joinpath(backbone).read_text()
        )
    return config


def budget(config: dict[str, Any], steps: int, seed: int, out: Path) -> None:
    """A fixed number of optimizer steps (not max_time: the warmup-cosine schedule is sized from the
    trainer's step count, so a time limit with unbounded epochs would leave the learning rate at ~0)."""
    config["seed_everything"] = seed
    trainer = config["trainer"]
    for key in ("max_steps", "max_epochs", "val_check_interval", "max_time"):
        trainer.pop(key, None)
    trainer |= {"max_steps": steps, "max_epochs": 100000, "enable_progress_bar": False}
    trainer |= {"default_root_dir": str(out), "logger": False}


def task_config(task: str, fraction: float, seed: int, steps: int, out: Path) -> dict[str, Any]:
    config = load(TASKS[task])
    budget(config, steps, seed, out)
    data = config["data"]["init_args"]
    data |= {"train_fraction": fraction, "seed": 0}  # the same labelled subset for every seed
    if task == "psortb":  # the pretraining tokenizer class, in both arms, so only the weights differ
        data["tokenizer"]["class_path"] = "tabrasa.tokenizers.esm.EsmProteinTokenizer"
    return config


def pretrain_config(task: str, fraction: float, seed: int, steps: int, out: Path) -> dict[str, Any]:
    source = task_config(task, fraction, seed, steps, out)
    config = load(PRETRAIN[task])
    budget(config, steps, seed, out)
    config["model"]["init_args"]["export_dir"] = str(out / "backbone")
    config["data"] = {
        "class_path": "tabrasa.data.unlabelled.InputsOf",
        "init_args": {"source": source["data"], "loader": config["data"]["init_args"]["loader"]},
    }
    return config


def run(config: dict[str, Any], folder: Path, test: bool) -> tuple[float, dict[str, float]]:
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    start = time.perf_counter()
    cli = build_cli(["fit", "--config", str(path), "--test_after_fit", str(test)], save_config=False)
    seconds = time.perf_counter() - start
    metrics = {
        k: float(v) for k, v in cli.trainer.callback_metrics.items() if k.startswith(("test/", "val/"))
    }
    return seconds, metrics


def arm(task: str, name: str, args: argparse.Namespace, seed: int, work: Path) -> dict[str, Any]:
    folder = work / f"{task}-{name}-{seed}"
    folder.mkdir(parents=True)
    pre_seconds = 0.0
    config = task_config(task, args.fraction, seed, args.finetune_steps[task], folder)
    if name == "self":
        pre = pretrain_config(task, args.fraction, seed, args.pretrain_steps[task], folder / "pre")
        (folder / "pre").mkdir()
        pre_seconds, _ = run(pre, folder / "pre", test=False)
        config["model"]["init_args"]["pretrained"] = {
            "family": "tabrasa",
            "path": str(folder / "pre/backbone"),
        }
    seconds, metrics = run(config, folder, test=True)
    row = {"task": task, "arm": name, "seed": seed, "fraction": args.fraction}
    row |= {"pretrain_s": round(pre_seconds, 1), "finetune_s": round(seconds, 1)}
    row |= {"total_s": round(pre_seconds + seconds, 1), "test_acc": metrics.get("test/acc")}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--fraction", type=float, default=0.1)
    p.add_argument("--pretrain-steps", type=int, nargs=2, default=[600, 300], help="fashion_mnist psortb")
    p.add_argument("--finetune-steps", type=int, nargs=2, default=[600, 300], help="fashion_mnist psortb")
    p.add_argument("--out", type=Path, default=ROOT / "results/pretraining/bench.json")
    args = p.parse_args()
    args.pretrain_steps = dict(zip(TASKS, args.pretrain_steps, strict=True))
    args.finetune_steps = dict(zip(TASKS, args.finetune_steps, strict=True))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for task in args.tasks:
            for seed in args.seeds:
                for name in ("scratch", "self"):
                    rows.append(arm(task, name, args, seed, Path(work)))
                    args.out.write_text(
                        json.dumps({"settings": vars(args) | {"out": str(args.out)}, "rows": rows}, indent=2)
                        + "\n"
                    )


if __name__ == "__main__":
    main()
