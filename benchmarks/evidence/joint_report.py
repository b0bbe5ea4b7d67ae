"""The joint-vs-separate table: per task and training fraction, each arm's test accuracy (mean ± sd over
seeds, steps per task in brackets), the joint run's gain over both separate arms, and the training-loop
seconds of every arm. Read from the JSONL `benchmarks/bench_joint.py` writes; the README's joint table is
this function's output on `results/joint/runs.jsonl`."""

from __future__ import annotations

import json
from pathlib import Path

# Run order: separate@wall takes its budget from the joint run of the same fraction and seed.
ARMS = ["separate", "joint", "separate@wall", "joint+task_embed"]


def summarise(log: Path) -> str:
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    cells: dict[tuple[float, str, str], list[float]] = {}
    runs: dict[tuple[float, str, int, str], float] = {}  # one entry per training run
    steps: dict[tuple[float, str, str], list[int]] = {}
    for r in rows:
        key = (r["fraction"], r["task"], r["arm"])
        cells.setdefault(key, []).append(r["test_acc"])
        steps.setdefault(key, []).append(r["steps"])
        # A joint row carries its whole run's loop time: one run per (arm, fraction, seed), not per task.
        run = "" if r["arm"].startswith("joint") else r["task"]
        runs[(r["fraction"], r["arm"], r["seed"], run)] = float(r["train_seconds"])
    seconds: dict[tuple[float, str], float] = {}
    for (fraction, arm, _, _), value in runs.items():
        seconds[(fraction, arm)] = seconds.get((fraction, arm), 0.0) + value
    arms = [arm for arm in ARMS if any(r["arm"] == arm for r in rows)]
    gaps = [(f"joint − {base}", base) for base in ("separate", "separate@wall") if base in arms]
    lines = []
    for fraction in sorted({r["fraction"] for r in rows}, reverse=True):
        lines += [
            f"\n**{fraction:.0%} of each training set** (test accuracy, mean ± sd over seeds; "
            "steps per task in brackets)\n",
            "| task | " + " | ".join(arms + [name for name, _ in gaps]) + " |",
            "|---" * (len(arms) + len(gaps) + 1) + "|",
        ]
        for task in dict.fromkeys(r["task"] for r in rows):
            values = {arm: cells.get((fraction, task, arm), []) for arm in arms}
            shown = [
                f"{_mean_sd(values[arm])} ({_steps(steps.get((fraction, task, arm), []))})" for arm in arms
            ]
            for _, base in gaps:
                both = values[base] and values.get("joint")
                shown.append(
                    f"{(_mean(values['joint']) - _mean(values[base])) * 100:+.1f} pts" if both else "–"
                )
            lines.append(f"| {task} | " + " | ".join(shown) + " |")
        walls = [f"{seconds.get((fraction, arm), 0.0):.0f} s" for arm in arms]
        lines.append("| training loop, all seeds | " + " | ".join(walls) + " |" + " |" * len(gaps))
    return "\n".join(lines) + "\n"


def _steps(values: list[int]) -> str:
    if not values:
        return "–"
    low, high = min(values), max(values)
    return f"{low}" if low == high else f"{low}–{high}"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _mean_sd(values: list[float]) -> str:
    if not values:
        return "–"
    mean = _mean(values)
    sd = (sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1)) ** 0.5
    return f"{mean:.3f} ± {sd:.3f}" if len(values) > 1 else f"{mean:.3f}"
