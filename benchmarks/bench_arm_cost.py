"""What one arm of the learning curves costs on this machine, before its sweep is started: the seconds of a
training step and of a full validation pass, measured through the same CLI run the sweep makes (the arm's
config at the protocol's width, batch and data settings, one torch thread), and from them an epoch and a
run at every fraction.

    python -m benchmarks.bench_arm_cost --modality audio --arm spectrogram_cnn

A run is priced twice: at its epoch cap (the most the protocol lets it take) and at the epochs the
modality's finished runs took at that fraction (mean over its arms in results/curves/runs.jsonl), which is
what most runs take. The arm's whole plan adds the bracketed rate sweep's first two rates at the smallest
and the largest fraction to three seeds of every fraction and three permuted runs at the largest.
Writes results/curves/arm_cost/MODALITY_ARM.json, with the machine's load average when it finished: a
step timed beside other work is slower than on an idle core.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytorch_lightning as pl

from benchmarks.bench_common import command_line, setup, write_json
from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey, run_args
from benchmarks.curves.plan import MODALITIES, ModalityPlan
from benchmarks.evidence.cli_run import quiet_lightning
from benchmarks.evidence.rate_sweep import RunLog
from tabrasa.training.freed_memory import keep_freed_memory
from tabrasa.training.lightning_cli import build_cli

ROOT = Path(__file__).resolve().parents[1]


class StepClock(pl.Callback):
    """Wall seconds of every training step, and of each whole validation pass."""

    def __init__(self) -> None:
        self.steps: list[float] = []
        self.validations: list[float] = []
        self._started = 0.0

    def on_train_batch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule, *_: Any) -> None:
        self._started = time.perf_counter()

    def on_train_batch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule, *_: Any) -> None:
        self.steps.append(time.perf_counter() - self._started)

    def on_validation_epoch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._started = time.perf_counter()

    def on_validation_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.validations.append(time.perf_counter() - self._started)


def measure(plan: ModalityPlan, arm_name: str, steps: int, fraction: float | None = None) -> dict[str, float]:
    """Median seconds of a training step (after two warm-up steps) and of one full validation pass, from a
    fit of `steps` steps (at most an epoch) at `fraction` (default the smallest) with the first rate."""
    arm, protocol = plan.arm(arm_name), plan.protocol
    fraction = protocol.fractions[0] if fraction is None else fraction
    key = RunKey(modality=plan.name, arm=arm.name, fraction=fraction, lr=protocol.rates[0], seed=0)
    quiet_lightning()
    with tempfile.TemporaryDirectory(prefix="tabrasa-arm-cost-") as scratch:
        args = run_args(ROOT, arm, key, protocol, plan.permutation_flag)
        args += ["--trainer.max_epochs", "1", "--trainer.limit_train_batches", str(steps)]
        cli = build_cli(
            args, run=False, trainer_defaults_override={"default_root_dir": scratch}, save_config=False
        )
        clock = StepClock()
        cli.trainer.callbacks.append(clock)
        cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    if len(clock.steps) < 3 or not clock.validations:
        raise RuntimeError(
            f"{plan.name}/{arm_name}: the fit logged {len(clock.steps)} steps; give --steps >= 3"
        )
    return {
        "step_seconds": statistics.median(clock.steps[2:]),
        "validation_seconds": clock.validations[-1],
        "steps_timed": len(clock.steps) - 2,
        "params": sum(p.numel() for p in cli.model.backbone.parameters()),
    }


def typical_epochs(plan: ModalityPlan, rows: Sequence[dict[str, Any]]) -> dict[float, float]:
    """fraction → mean epochs of the modality's finished network runs there (floors excluded)."""
    networks = {a.name for a in plan.arms if not a.is_floor}
    epochs: dict[float, list[int]] = {}
    for r in rows:
        if r["modality"] == plan.name and r["arm"] in networks and not r.get("permuted"):
            epochs.setdefault(float(r["fraction"]), []).append(int(r["epochs"]))
    return {f: statistics.mean(e) for f, e in epochs.items()}


def price(
    plan: ModalityPlan,
    arm_name: str,
    timing: dict[str, float],
    train_sizes: dict[float, int],
    rows: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The arm's runs priced at its own fractions (a self-pretrained arm runs two), with permuted runs
    only where the arm takes the permutation test."""
    protocol = plan.protocol
    arm = plan.arm(arm_name)
    usual = typical_epochs(plan, rows)
    fractions = []
    for fraction in arm.fractions_of(protocol):
        n_train = train_sizes[fraction]
        per_epoch_steps = math.ceil(n_train / protocol.batch_size)
        epoch = per_epoch_steps * timing["step_seconds"] + timing["validation_seconds"]
        cap = max(protocol.max_epochs, math.ceil(protocol.min_steps / per_epoch_steps))
        typical = usual.get(fraction, cap)
        fractions.append({
            "fraction": fraction, "n_train": n_train, "steps_an_epoch": per_epoch_steps,
            "epoch_seconds": round(epoch, 1), "epoch_cap": cap,
            "run_hours_at_cap": round(cap * epoch / 3600, 2),
            "typical_epochs": round(typical, 1), "run_hours_typical": round(typical * epoch / 3600, 2),
        })  # fmt: skip
    ends = (fractions[0], fractions[-1])
    seeds = len(protocol.seeds)
    rates = len(protocol.rates)
    # the rate sweep's other first rates at both ends (the first rate is seed 0's curve run)
    plan_runs: list[dict[str, Any]] = [*ends] * (rates - 1)
    plan_runs += fractions * seeds  # every seed's curve
    if arm.permutation_test:
        plan_runs += [fractions[-1]] * seeds  # and its permuted run
    return {
        "fractions": fractions,
        "plan_runs": len(plan_runs),
        "plan_lane_hours_typical": round(sum(r["run_hours_typical"] for r in plan_runs), 1),
        "plan_lane_hours_at_cap": round(sum(r["run_hours_at_cap"] for r in plan_runs), 1),
    }


def train_sizes(plan: ModalityPlan, rows: Sequence[dict[str, Any]], log: Path) -> dict[float, int]:
    """fraction → training examples, as the modality's runs in `log` record them."""
    sizes = {float(r["fraction"]): int(r["n_train"]) for r in rows if r["modality"] == plan.name}
    missing = set(plan.protocol.fractions) - set(sizes)
    if missing:
        raise ValueError(
            f"{log}: no {plan.name} run at fractions {sorted(missing)} to read the training size from; "
            f"run the modality's floor first (python -m benchmarks.bench_curves --modalities {plan.name} "
            f"--arms {next(a.name for a in plan.arms if a.is_floor)})"
        )
    return {f: sizes[f] for f in plan.protocol.fractions}


def arm_timing_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options of a script that times one arm's training steps through `measure`."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modality", choices=sorted(MODALITIES), required=True)
    p.add_argument("--arm", required=True, help="an arm of that modality, as in points.csv")
    p.add_argument("--steps", type=int, default=12, help="training steps to time (the first two warm up)")
    p.add_argument("--threads", type=int, default=1)
    return p


def main(argv: list[str] | None = None) -> int:
    p = arm_timing_parser(__doc__)
    p.add_argument("--log", type=Path, default=Path("results/curves/runs.jsonl"))
    p.add_argument("--out", type=Path, default=None, help="default results/curves/arm_cost/MODALITY_ARM.json")
    args = p.parse_args(argv)
    plan = MODALITIES[args.modality]
    plan.arm(args.arm)  # an unknown arm stops here, with the modality's arms named
    rows = list(RunLog(args.log, KEY_FIELDS).runs.values())  # the sweep's log, read as the sweep reads it
    sizes = train_sizes(plan, rows, args.log)
    environment = setup(args.threads)
    keep_freed_memory()  # as the sweep's processes do (bench_curves)
    timing = measure(plan, args.arm, args.steps)
    result = {
        "command": command_line("benchmarks.bench_arm_cost", argv),
        "modality": args.modality,
        "arm": args.arm,
        "width": plan.protocol.width,
        "batch_size": plan.protocol.batch_size,
        **{k: round(v, 3) if isinstance(v, float) else v for k, v in timing.items()},
        **price(plan, args.arm, timing, sizes, rows),
        "environment": {**environment, "load_average_1m_at_end": round(os.getloadavg()[0], 2)},
    }
    out = args.out or Path("results/curves/arm_cost") / f"{args.modality}_{args.arm}.json"
    write_json(out, result)
    for row in result["fractions"]:
        print(row)
    print(
        f"{args.modality}/{args.arm}: {timing['step_seconds']:.2f} s a step, "
        f"{timing['validation_seconds']:.1f} s a validation; plan of {result['plan_runs']} runs: "
        f"{result['plan_lane_hours_typical']} lane-hours at typical epochs, "
        f"{result['plan_lane_hours_at_cap']} at the caps → {out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
