"""What the plan still needs beside what it has cost: per modality the runs left and their lane-hours, so the
report prices the whole protocol, not only the part that has run.

Each run left is priced by its arm and fraction, from the nearest evidence there is, in this order:

1. the mean seconds of the arm's own finished runs at that fraction;
2. the arm's measured price at that fraction (results/curves/arm_cost/, benchmarks/bench_arm_cost.py: a
   training step and a validation pass of the arm itself, timed through the sweep's own run);
3. the mean seconds of the modality's finished network runs at that fraction;
4. the mean seconds of every modality's finished network runs.

A single mean a modality would underprice its slow arms: on audio the spectrogram CNN's run costs about
nine times the mean of the audio arms that have run. Each arm says which of these priced it.

The count is a floor: while an arm's rate sweep is open, its extensions are not known yet (each may add one
run), and its curve is counted as the runs a finished sweep would name.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.curves.early_stopped_run import KEY_FIELDS
from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.sweep import needed_keys
from benchmarks.evidence.rate_sweep import RunLog

# (modality, arm) → fraction → seconds of one run, as benchmarks/bench_arm_cost.py measured it
MeasuredPrices = Mapping[tuple[str, str], Mapping[float, float]]
SOURCES = ("the arm's own runs", "the arm's measured price", "the modality's runs", "every modality's runs")


def fractions_left(plan: ModalityPlan, arm: Arm, log: RunLog) -> list[float]:
    """The fraction of each run the arm still has to train, at least (curve and permutation parts)."""
    keys, final = needed_keys(plan, arm, log)
    left = [key.fraction for key in keys if log.get(key) is None]
    fractions = arm.fractions_of(plan.protocol)
    if final:  # the later seeds' permuted runs are named once the first seed's rate is decided
        unnamed = len(plan.protocol.seeds) - sum(1 for key in keys if key.permuted)
        return left + [fractions[-1]] * (unnamed if arm.permutation_test and not arm.is_floor else 0)
    swept_ends = {fractions[0], fractions[-1]}  # the first seed's curve reuses its rate-sweep runs
    seeds = plan.protocol.seeds
    curve = [f for i, _ in enumerate(seeds) for f in fractions if i > 0 or f not in swept_ends]
    permutation = [fractions[-1]] * len(seeds) if arm.permutation_test else []
    return left + curve + permutation


def runs_left(plan: ModalityPlan, arm: Arm, log: RunLog) -> int:
    """The arm's runs still to train, at least (curve and permutation parts)."""
    return len(fractions_left(plan, arm, log))


@dataclass(frozen=True)
class ArmCost:
    arm: str
    runs_left: int
    hours_left: float
    priced_by: tuple[str, ...]  # which of SOURCES priced its runs, in that order
    longest_hours: float = 0.0  # its dearest run left: how long a loan must last to finish it (one core)


@dataclass(frozen=True)
class PlanCost:
    runs_done: int
    hours_done: float
    runs_left: int  # floors' fits included (seconds each, not priced)
    hours_left: float
    arms: tuple[ArmCost, ...]  # the network arms with runs left


def measured_prices(folder: Path) -> dict[tuple[str, str], dict[float, float]]:
    """Every arm price in `folder` (results/curves/arm_cost/*.json): seconds of a run at each fraction, at
    the epochs the modality's runs typically take there."""
    prices: dict[tuple[str, str], dict[float, float]] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        report = json.loads(path.read_text())
        prices[(report["modality"], report["arm"])] = {
            float(f["fraction"]): 3600 * float(f["run_hours_typical"]) for f in report["fractions"]
        }
    return prices


def network_seconds(plan: ModalityPlan, rows: Sequence[dict[str, Any]]) -> list[float]:
    networks = {a.name for a in plan.arms if not a.is_floor}
    return [float(r["seconds"]) for r in rows if r["modality"] == plan.name and r["arm"] in networks]


def _mean_at(rows: Sequence[dict[str, Any]], fraction: float) -> float | None:
    seconds = [float(r["seconds"]) for r in rows if float(r["fraction"]) == fraction]
    return statistics.mean(seconds) if seconds else None


def run_price(
    plan: ModalityPlan,
    arm: Arm,
    fraction: float,
    rows: Sequence[dict[str, Any]],
    everyone: float,
    measured: MeasuredPrices,
) -> tuple[int, float]:
    """Seconds one run of the arm at `fraction` costs, and which of SOURCES priced it (its index);
    `everyone`: the mean of every modality's runs."""
    networks = {a.name for a in plan.arms if not a.is_floor}
    mine = [r for r in rows if r["modality"] == plan.name]
    own = [r for r in mine if r["arm"] == arm.name]
    modality = [r for r in mine if r["arm"] in networks]
    price = measured.get((plan.name, arm.name), {})
    candidates = (_mean_at(own, fraction), price.get(fraction), _mean_at(modality, fraction), everyone)
    return next((i, v) for i, v in enumerate(candidates) if v is not None)


def everyones_mean(plans: Sequence[ModalityPlan], rows: Sequence[dict[str, Any]]) -> float:
    """The mean seconds of every modality's finished network runs: the last resort of `run_price`."""
    all_runs = [s for plan in plans for s in network_seconds(plan, rows)]
    return statistics.mean(all_runs) if all_runs else 0.0


def arm_cost(
    plan: ModalityPlan,
    arm: Arm,
    rows: Sequence[dict[str, Any]],
    everyone: float,
    measured: MeasuredPrices,
) -> ArmCost:
    """The arm's runs left, each priced as the module says; `everyone`: the mean of every modality's runs."""
    mine = [r for r in rows if r["modality"] == plan.name]
    seconds, longest, used = 0.0, 0.0, set()
    fractions = fractions_left(plan, arm, RunLog.of_runs(mine, KEY_FIELDS))
    for fraction in fractions:
        source, value = run_price(plan, arm, fraction, rows, everyone, measured)
        seconds, longest = seconds + value, max(longest, value)
        used.add(source)
    sources = tuple(SOURCES[i] for i in sorted(used))
    return ArmCost(arm.name, len(fractions), seconds / 3600, sources, longest_hours=longest / 3600)


def plan_cost(
    plan: ModalityPlan,
    rows: Sequence[dict[str, Any]],
    plans: Sequence[ModalityPlan],
    measured: MeasuredPrices | None = None,
) -> PlanCost:
    """The modality's cost so far and left; `measured`: the arms' measured prices (`measured_prices`)."""
    mine = [r for r in rows if r["modality"] == plan.name]
    log = RunLog.of_runs(mine, KEY_FIELDS)
    everyone = everyones_mean(plans, rows)
    arms = tuple(
        cost
        for arm in plan.arms
        if not arm.is_floor and (cost := arm_cost(plan, arm, rows, everyone, measured or {})).runs_left
    )
    floors = sum(runs_left(plan, arm, log) for arm in plan.arms if arm.is_floor)
    return PlanCost(
        runs_done=len(mine),
        hours_done=sum(float(r["seconds"]) for r in mine) / 3600,
        runs_left=sum(a.runs_left for a in arms) + floors,
        hours_left=sum(a.hours_left for a in arms),
        arms=arms,
    )


def priced_by(cost: PlanCost) -> str:
    """Which SOURCES priced the runs left, in their order; "" with none left."""
    used = {source for arm in cost.arms for source in arm.priced_by}
    return ", ".join(source for source in SOURCES if source in used)
