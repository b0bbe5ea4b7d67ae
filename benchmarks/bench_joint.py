"""Joint vs separate: what does sharing one backbone instance across four modalities cost or give each?

Arms (per seed and training fraction):
  separate          one Classifier per task, `--steps` optimizer steps each (4 runs)
  joint             one JointTask over the four tasks, round robin, 4 × steps steps: every task gets
                    exactly `steps` steps, so total optimizer steps and the work per task are equal
  joint+task_embed  the same with a learned per-task embedding added to every token
  separate@wall     one Classifier per task given the wall time instead of the steps: the joint run's
                    training-loop seconds split evenly over the tasks, so the four models together train
                    as long as the one joint model. The budget becomes a step count through the task's
                    own measured rate in `separate` (steps × budget / its seconds), so the warm-up and
                    cosine schedule end where the time does; run after `separate` and `joint`
and all of them at `--fractions` of each training set (0.1: the small-data case). Separate runs use the
joint config's own model settings (pooling, head, optimizer), so the arms differ only in sharing. Every
run goes through `build_cli` with the shipped `configs/joint/four_modalities.yaml` task
blocks, trains with no selection, and is scored with its final weights on each task's whole test split.
Each row records the training loop's seconds (`train_seconds`, data set-up excluded: it is the same for
every arm) and the steps it took.

    python -m benchmarks.bench_joint --steps 300 --seeds 0 1     # writes results/joint/
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

from benchmarks.bench_common import command_line
from benchmarks.evidence.cli_run import loop_seconds, quiet_lightning, trained
from benchmarks.evidence.joint_report import ARMS, summarise

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


def train_and_score(config: dict[str, Any], budget: list[str]) -> tuple[dict[str, float], float, int]:
    """Train on `budget` (a step count or a wall time, as trainer overrides) with no selection; returns
    every logged test metric, the training loop's seconds and the optimizer steps taken."""
    with written(config) as path, trained(path, budget) as (cli, _):
        cli.trainer.test(cli.model, datamodule=cli.datamodule, verbose=False)
        logged = cli.trainer.callback_metrics.items()
        scores = {k: float(v) for k, v in logged if "/test/" in k or k.startswith("test/")}
        return scores, loop_seconds(cli), int(cli.trainer.global_step)


def by_steps(steps: int) -> list[str]:
    return ["--trainer.max_steps", str(steps)]


def row(task: str, scores: dict[str, float], prefix: str, seconds: float, steps: int) -> dict[str, Any]:
    return {
        "task": task,
        "test_acc": scores[f"{prefix}test/acc"],
        "test_f1": scores[f"{prefix}test/f1"],
        "train_seconds": round(seconds, 1),
        "steps": steps,
    }


def run_arm(
    arm: str, fraction: float, seed: int, steps: int, limit: int | None, log: Path
) -> list[dict[str, Any]]:
    joint = joint_config(fraction, arm == "joint+task_embed", seed, limit)
    tasks = list(joint["data"]["init_args"]["tasks"])
    rows = []
    if arm == "separate":
        for task in tasks:
            scores, seconds, taken = train_and_score(single_config(joint, task), by_steps(steps))
            rows.append(row(task, scores, "", seconds, taken))
    elif arm == "separate@wall":
        budget = loop_seconds_of(log, "joint", fraction, seed)[""] / len(tasks)
        rates = loop_seconds_of(log, "separate", fraction, seed)
        for task in tasks:
            task_steps = max(1, round(steps * budget / rates[task]))
            scores, seconds, taken = train_and_score(single_config(joint, task), by_steps(task_steps))
            rows.append(row(task, scores, "", seconds, taken))
    else:
        scores, seconds, taken = train_and_score(joint, by_steps(steps * len(tasks)))
        # Round robin: each task took exactly a quarter of the steps; the loop time is the run's.
        rows = [row(task, scores, f"{task}/", seconds, taken // len(tasks)) for task in tasks]
    return [{"arm": arm, "fraction": fraction, "seed": seed, **r} for r in rows]


def loop_seconds_of(log: Path, arm: str, fraction: float, seed: int) -> dict[str, float]:
    """Training-loop seconds of an arm's runs at (fraction, seed): task → seconds, or "" → the joint
    run's. Fails with the arm to run first when it has not run."""
    found: dict[str, float] = {}
    for r in map(json.loads, log.read_text().splitlines()) if log.exists() else []:
        if (r["arm"], r["fraction"], r["seed"]) == (arm, fraction, seed):
            found["" if arm.startswith("joint") else r["task"]] = float(r["train_seconds"])
    if not found:
        raise SystemExit(f"separate@wall needs the {arm} arm of fraction={fraction} seed={seed} first")
    return found


def done_keys(log: Path) -> set[tuple[str, float, int]]:
    if not log.exists():
        return set()
    return {(r["arm"], r["fraction"], r["seed"]) for r in map(json.loads, log.read_text().splitlines())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=300, help="optimizer steps per task")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--arms", nargs="+", default=ARMS, choices=ARMS)
    parser.add_argument("--limit", type=int, default=None, help="examples per split (smoke tests)")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "joint")
    args = parser.parse_args(argv)
    quiet_lightning()
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "runs.jsonl"
    done = done_keys(log)
    # Seeds outermost: a sweep stopped part-way still has every fraction at its first seeds.
    for seed in args.seeds:
        for fraction in args.fractions:
            for arm in args.arms:
                if (arm, fraction, seed) in done:
                    continue  # resumable: a killed sweep starts at the first arm it had not finished
                rows = run_arm(arm, fraction, seed, args.steps, args.limit, log)
                with log.open("a") as f:
                    f.writelines(json.dumps(r) + "\n" for r in rows)
                print(
                    f"{arm} fraction={fraction} seed={seed}: "
                    + ", ".join(f"{r['task']} {r['test_acc']:.3f}" for r in rows)
                )
    table = summarise(log)
    command = command_line("benchmarks.bench_joint", argv)
    (args.out / "table.md").write_text(f"`{command}`\n{table}")
    print(table)


if __name__ == "__main__":
    main()
