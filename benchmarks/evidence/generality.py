"""The cost of generality: each modality's shipped config trained as a user trains it (`tabrasa fit`:
validation, the best checkpoint by val/acc, tested once), with the transformer and with each inductive-bias
baseline behind the same tokenizer, data module, budget and test set (with the standard curves given,
only the baseline their validation prefers at full data).

Runs are interleaved (seed outermost, then arms) so drifting machine load falls on every arm alike, and
each run's card (wall time, load, versions, the tested checkpoint, test metrics) is logged whole. The
learning rate of an arm is the one a learning-curve sweep chose for it on validation at full data when
that sweep's log is given (replayed under that sweep's rate protocol); otherwise the config's own rate,
and the table says which.

A step cap (`max_steps`) trains every arm for the same number of optimizer steps with the config's warmup
and cosine planned over them (Lightning's `estimated_stepping_batches` is the cap), validating at each
quarter of the cap so the last step is among the candidates for the tested checkpoint. Each run records
its cap, and a log refuses runs at another cap, so one table never mixes budgets.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.evidence.arms import MODALITIES, TRANSFORMER, Sweep, backbone_file
from benchmarks.evidence.curve_gaps import best_baseline
from benchmarks.evidence.intervals import mean_interval
from benchmarks.evidence.learning_curves import Point, summarise
from benchmarks.evidence.rate_sweep import RunLog

SEEDS = (0, 1)
VALIDATIONS_PER_CAPPED_FIT = 4


@dataclass(frozen=True, kw_only=True)
class GeneralityKey:
    modality: str
    arm: str
    seed: int


KEY_FIELDS = tuple(GeneralityKey.__dataclass_fields__)


def arms(modality: str) -> tuple[str, ...]:
    return (TRANSFORMER, *MODALITIES[modality].baselines)


def full_data_points(curves: RunLog | None, sweep: Sweep, modality: str) -> list[Point]:
    """The curves' finished points at their largest fraction for this modality (none without curves)."""
    if curves is None:
        return []
    return [p for p in summarise(curves, [modality], sweep) if p.fraction == max(sweep.fractions)]


def chosen_rates(points: list[Point], modality: str) -> dict[str, float]:
    """Each arm's rate chosen on validation at full data (`full_data_points`); arms without a finished
    sweep are left out: they run at the config's rate."""
    return {p.arm: p.lr for p in points if p.arm in arms(modality)}


def arms_to_run(points: list[Point], modality: str) -> tuple[str, ...]:
    """The transformer and the baseline the curves' *validation* prefers at full data
    (`curve_gaps.best_baseline`, as in the curves' gap table), since the table compares the transformer
    with the best baseline and a fit of the shipped config per losing baseline (15–90 minutes on 2 CPU
    cores) buys nothing. Every baseline while any of them has no finished full-data sweep to choose by
    (or without curves)."""
    baselines = MODALITIES[modality].baselines
    best = best_baseline(points, modality, max((p.fraction for p in points), default=1.0))
    if len(baselines) < 2 or best is None or not set(baselines) <= {p.arm for p in points}:
        return arms(modality)
    return (TRANSFORMER, best.arm)


def step_cap_args(max_steps: int | None) -> list[str]:
    """Overrides that train exactly `max_steps` steps and validate at each quarter of them (none: the
    config's own epochs and validation)."""
    if max_steps is None:
        return []
    if max_steps < VALIDATIONS_PER_CAPPED_FIT or max_steps % VALIDATIONS_PER_CAPPED_FIT:
        raise ValueError(
            f"max_steps={max_steps}: give a multiple of {VALIDATIONS_PER_CAPPED_FIT} (a capped fit "
            f"validates at each quarter, so its last step is validated)"
        )
    return [
        "--trainer.max_steps", str(max_steps),
        "--trainer.max_epochs", "-1",
        "--trainer.val_check_interval", str(max_steps // VALIDATIONS_PER_CAPPED_FIT),
        "--trainer.check_val_every_n_epoch", "null",
    ]  # fmt: skip


def check_step_cap(log: RunLog, max_steps: int | None) -> None:
    """Refuse to add runs at `max_steps` to a log whose runs trained at another cap."""
    caps = {run.get("max_steps") for run in log.runs.values()}
    if caps - {max_steps}:
        resume = " or ".join("without --max-steps" if c is None else f"--max-steps {c}" for c in caps)
        raise ValueError(
            f"{log.path} holds runs at max_steps {sorted(caps, key=str)}, not {max_steps}: one table "
            f"compares one budget; resume it {resume}, or give another --out"
        )


def command(
    root: Path, key: GeneralityKey, lr: float | None, save_dir: Path, max_steps: int | None = None
) -> list[str]:
    """`tabrasa fit` of the modality's config with this arm's backbone, seed, (if chosen) rate and (if
    given) step cap."""
    modality = MODALITIES[key.modality]
    args = [
        "fit", "--config", modality.config,
        "--model.init_args.backbone", str(backbone_file(root, key.arm)),
        "--seed_everything", str(key.seed),
        "--trainer.enable_progress_bar", "false",
        "--trainer.logger.init_args.save_dir", str(save_dir),
    ]  # fmt: skip
    if lr is not None:
        args += ["--model.init_args.optimizer.lr", str(lr)]
    return args + step_cap_args(max_steps)


def run_one(
    root: Path, key: GeneralityKey, lr: float | None, extra: list[str], max_steps: int | None = None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tabrasa-generality-") as scratch:
        args = [*command(root, key, lr, Path(scratch), max_steps), *extra]
        done = subprocess.run([sys.executable, "-m", "tabrasa.cli", *args], cwd=root)
        if done.returncode != 0:
            raise RuntimeError(f"tabrasa {' '.join(args)} failed with status {done.returncode}")
        cards = sorted(Path(scratch).rglob("run_card.json"), key=lambda p: p.stat().st_mtime)
        if not cards:
            raise RuntimeError(f"tabrasa {' '.join(args)} wrote no run card")
        card = json.loads(cards[-1].read_text())
    return {
        **asdict(key),
        "lr": lr,
        "lr_source": "standard curves (val, full data)" if lr is not None else "config",
        "max_steps": max_steps,
        "test_acc": float(card["test"]["test/acc"]),
        "test_f1": float(card["test"]["test/f1"]),
        "val_acc": float(card["selected_on"]["value"]),
        "fit_seconds": float(card["fit_seconds"]),
        "global_step": int(card["global_step"]),
        "card": card,
    }


def run_generality(
    root: Path,
    names: list[str],
    log: RunLog,
    curves: RunLog | None,
    sweep: Sweep,
    seeds: tuple[int, ...] = SEEDS,
    extra: list[str] | None = None,
    max_steps: int | None = None,
) -> None:
    check_step_cap(log, max_steps)
    for name in names:
        points = full_data_points(curves, sweep, name)
        rates, chosen = chosen_rates(points, name), arms_to_run(points, name)
        for seed in seeds:
            for arm in chosen:
                key = GeneralityKey(modality=name, arm=arm, seed=seed)
                if log.get(key) is None:  # type: ignore[arg-type]
                    run = run_one(root, key, rates.get(arm), list(extra or []), max_steps)
                    log.add(run)
                    print(
                        f"{name}/{arm}/{seed}: test {run['test_acc']:.4f} in {run['fit_seconds']} s",
                        flush=True,
                    )


@dataclass(frozen=True, kw_only=True)
class GeneralityRow:
    modality: str
    arm: str
    seeds: int
    test_mean: float
    test_low: float
    test_high: float
    val_mean: float
    seconds_mean: float
    steps: int
    lr: str


def summarise_generality(
    log: RunLog, names: list[str], seeds: tuple[int, ...] = SEEDS
) -> list[GeneralityRow]:
    rows = []
    for name in names:
        for arm in arms(name):
            runs = [log.get(GeneralityKey(modality=name, arm=arm, seed=s)) for s in seeds]  # type: ignore[arg-type]
            done = [r for r in runs if r is not None]
            if not done:
                continue
            test = mean_interval([float(r["test_acc"]) for r in done])
            rate = done[0]["lr"]
            rows.append(
                GeneralityRow(
                    modality=name,
                    arm=arm,
                    seeds=len(done),
                    test_mean=test.mean,
                    test_low=test.low,
                    test_high=test.high,
                    val_mean=sum(float(r["val_acc"]) for r in done) / len(done),
                    seconds_mean=round(sum(float(r["fit_seconds"]) for r in done) / len(done), 1),
                    steps=int(done[0]["global_step"]),
                    lr=f"{rate:g} ({done[0]['lr_source']})" if rate is not None else "config's",
                )
            )
    return rows


def generality_table(rows: list[GeneralityRow]) -> str:
    lines = [
        "| modality | config | arm | test acc, mean [95%] | seeds | fit s (mean) | steps | lr |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        accuracy = f"{r.test_mean:.3f}" + (f" [{r.test_low:.3f}, {r.test_high:.3f}]" if r.seeds > 1 else "")
        lines.append(
            f"| {r.modality} | `{MODALITIES[r.modality].config}` | {r.arm} | {accuracy} | {r.seeds} | "
            f"{r.seconds_mean:,.0f} | {r.steps:,} | {r.lr} |"
        )
    lines += [
        "",
        "| modality | best baseline (by val) | transformer − it, pts | transformer's time ÷ its time |",
        "|---|---|---|---|",
    ]
    for name in dict.fromkeys(r.modality for r in rows):
        mine = {r.arm: r for r in rows if r.modality == name}
        rivals = [r for r in mine.values() if r.arm != TRANSFORMER]
        if TRANSFORMER not in mine or not rivals:
            continue
        best, ours = max(rivals, key=lambda r: r.val_mean), mine[TRANSFORMER]
        lines.append(
            f"| {name} | {best.arm} | {100 * (ours.test_mean - best.test_mean):+.1f} | "
            f"{ours.seconds_mean / best.seconds_mean:.2f}× |"
        )
    return "\n".join(lines) + "\n"
