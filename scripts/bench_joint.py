"""Joint vs separate: what does sharing one backbone instance across four modalities cost or give each?

Arms (per seed, each task trained for `--steps` optimizer steps):
  separate          one Classifier per task, `steps` steps each (4 runs)
  joint             one JointTask over the four tasks, round-robin, 4 × steps steps: every task gets
                    exactly `steps` steps, so total optimizer steps and the work per task are equal
  joint+task_embed  the same with a learned per-task embedding added to every token
and the same three at `--small-fraction` of each training set (the small-data case). Separate runs use the
joint config's own model settings (pooling, head, optimizer), so the arms differ only in sharing. Every
run goes through `tabrasa.cli.build_cli` with the shipped `configs/joint/four_modalities.yaml` task
blocks, trains for fixed steps with no selection, and is scored with its final weights on the whole
validation and test splits. Wall time is measured per run, so "equal steps" can be read as wall time too.

    python scripts/bench_joint.py --steps 300 --seeds 0 1     # writes results/joint/
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from tabrasa.evidence.cli_run import quiet_lightning, trained

ROOT = Path(__file__).resolve().parents[1]
JOINT = ROOT / "configs" / "joint" / "four_modalities.yaml"
BACKBONE = ROOT / "configs" / "backbone" / "small.yaml"


def joint_config(fraction: float, task_embedding: bool, seed: int, limit: int | None) -> dict[str, Any]:
    config = yaml.safe_load(JOINT.read_text())
    config["seed_everything"] = seed
    model = config["model"]["init_args"]
    model["backbone"] = str(BACKBONE)
    model["task_embedding"] = task_embedding
    data = config["data"]["init_args"]
    data["sampling"] = "round_robin"
    data["seed"] = seed
    for block in data["tasks"].values():
        block["init_args"]["train_fraction"] = fraction
        block["init_args"]["seed"] = seed
        block["init_args"].setdefault("loader", {})["num_workers"] = 0
        if limit is not None:
            block["init_args"]["limit"] = limit
    return config


def single_config(joint: dict[str, Any], task: str) -> dict[str, Any]:
    """The single-task run of `task` with the joint run's model settings: only the sharing differs."""
    model = dict(joint["model"]["init_args"])
    model.pop("task_embedding", None)
    model.pop("objectives", None)
    model.pop("loss_weights", None)
    return {
        "seed_everything": joint["seed_everything"],
        "trainer": {"precision": "32-true"},
        "model": {"class_path": "tabrasa.tasks.Classifier", "init_args": model},
        "data": joint["data"]["init_args"]["tasks"][task],
    }


@contextmanager
def written(config: dict[str, Any]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="tabrasa-joint-") as folder:
        path = Path(folder) / "config.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        yield path


def train_and_score(config: dict[str, Any], steps: int) -> tuple[dict[str, float], float]:
    """Fixed steps, no selection; returns every logged val/test metric and the training seconds."""
    scores: dict[str, float] = {}
    with written(config) as path, trained(path, ["--trainer.max_steps", str(steps)]) as (cli, seconds):
        for stage, evaluate in (("val", cli.trainer.validate), ("test", cli.trainer.test)):
            evaluate(cli.model, datamodule=cli.datamodule, verbose=False)
            logged = cli.trainer.callback_metrics.items()
            scores |= {k: float(v) for k, v in logged if f"/{stage}/" in k or k.startswith(f"{stage}/")}
    return scores, seconds


def run_arm(arm: str, fraction: float, seed: int, steps: int, limit: int | None) -> list[dict[str, Any]]:
    joint = joint_config(fraction, arm == "joint+task_embed", seed, limit)
    tasks = list(joint["data"]["init_args"]["tasks"])
    rows = []
    if arm == "separate":
        for task in tasks:
            scores, seconds = train_and_score(single_config(joint, task), steps)
            rows.append(
                {
                    "task": task,
                    "val_acc": scores["val/acc"],
                    "test_acc": scores["test/acc"],
                    "test_f1": scores["test/f1"],
                    "seconds": round(seconds, 1),
                    "steps": steps,
                }
            )
    else:
        scores, seconds = train_and_score(joint, steps * len(tasks))
        for task in tasks:
            rows.append(
                {
                    "task": task,
                    "val_acc": scores[f"{task}/val/acc"],
                    "test_acc": scores[f"{task}/test/acc"],
                    "test_f1": scores[f"{task}/test/f1"],
                    "seconds": round(seconds / len(tasks), 1),
                    "steps": steps,
                }
            )
    return [{"arm": arm, "fraction": fraction, "seed": seed, **row} for row in rows]


def done_keys(log: Path) -> set[tuple[str, float, int]]:
    if not log.exists():
        return set()
    return {(r["arm"], r["fraction"], r["seed"]) for r in map(json.loads, log.read_text().splitlines())}


def summarise(log: Path) -> str:
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    cells: dict[tuple[float, str, str], list[float]] = {}
    seconds: dict[tuple[float, str], float] = {}
    for r in rows:
        cells.setdefault((r["fraction"], r["task"], r["arm"]), []).append(r["test_acc"])
        seconds[(r["fraction"], r["arm"])] = seconds.get((r["fraction"], r["arm"]), 0.0) + r["seconds"]
    arms = ["separate", "joint", "joint+task_embed"]
    lines = []
    for fraction in sorted({r["fraction"] for r in rows}, reverse=True):
        lines += [
            f"\n**{fraction:.0%} of each training set** (test accuracy, mean ± sd over seeds)\n",
            "| task | " + " | ".join(arms) + " | joint − separate |",
            "|---" * (len(arms) + 2) + "|",
        ]
        for task in dict.fromkeys(r["task"] for r in rows):
            values = [cells.get((fraction, task, arm), []) for arm in arms]
            shown = [_mean_sd(v) for v in values]
            gap = (_mean(values[1]) - _mean(values[0])) * 100 if values[0] and values[1] else float("nan")
            lines.append(f"| {task} | " + " | ".join(shown) + f" | {gap:+.1f} pts |")
        walls = [f"{seconds.get((fraction, arm), 0.0):.0f} s" for arm in arms]
        lines.append("| wall, all seeds | " + " | ".join(walls) + " | |")
    return "\n".join(lines) + "\n"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _mean_sd(values: list[float]) -> str:
    if not values:
        return "–"
    mean = _mean(values)
    sd = (sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1)) ** 0.5
    return f"{mean:.3f} ± {sd:.3f}" if len(values) > 1 else f"{mean:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=300, help="optimizer steps per task")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--arms", nargs="+", default=["separate", "joint", "joint+task_embed"])
    parser.add_argument("--limit", type=int, default=None, help="examples per split (smoke tests)")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "joint")
    args = parser.parse_args(argv)
    quiet_lightning()
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "runs.jsonl"
    done = done_keys(log)
    for fraction in args.fractions:
        for seed in args.seeds:
            for arm in args.arms:
                if (arm, fraction, seed) in done:
                    continue  # resumable: a killed sweep starts at the first arm it had not finished
                rows = run_arm(arm, fraction, seed, args.steps, args.limit)
                with log.open("a") as f:
                    f.writelines(json.dumps(r) + "\n" for r in rows)
                print(
                    f"{arm} fraction={fraction} seed={seed}: "
                    + ", ".join(f"{r['task']} {r['test_acc']:.3f}" for r in rows)
                )
    table = summarise(log)
    command = "python scripts/bench_joint.py " + " ".join(
        argv if argv is not None else __import__("sys").argv[1:]
    )
    (args.out / "table.md").write_text(f"`{command.strip()}`\n{table}")
    print(table)


if __name__ == "__main__":
    main()
