"""What the plan still needs beside what it has cost: per modality the runs left and their lane-hours at the
mean seconds of the modality's finished network runs, so the report prices the whole protocol, not only
the part that has run.

The count is a floor: while an arm's rate sweep is open, its extensions are not known yet (each may add one
run), and its curve is counted as the runs a finished sweep would name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.curves.early_stopped_run import KEY_FIELDS
from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.sweep import needed_keys
from benchmarks.evidence.rate_sweep import RunLog


def runs_left(plan: ModalityPlan, arm: Arm, log: RunLog) -> int:
    """The arm's runs still to train, at least (curve and permutation parts)."""
    keys, final = needed_keys(plan, arm, log)
    left = sum(1 for key in keys if log.get(key) is None)
    if final:
        return left
    fractions = arm.fractions_of(plan.protocol)
    swept_ends = len({fractions[0], fractions[-1]})  # the first seed's curve reuses its rate-sweep runs
    curve = len(plan.protocol.seeds) * len(fractions) - swept_ends
    permutation = len(plan.protocol.seeds) if arm.permutation_test else 0
    return left + curve + permutation


@dataclass(frozen=True)
class PlanCost:
    runs_done: int
    hours_done: float
    runs_left: int
    hours_left: float
    seconds_a_run: float  # what a network run is priced at
    priced_by: str  # whose runs set that price: the modality's own, or every modality's


def network_seconds(plan: ModalityPlan, rows: Sequence[dict[str, Any]]) -> list[float]:
    networks = {a.name for a in plan.arms if not a.is_floor}
    return [float(r["seconds"]) for r in rows if r["modality"] == plan.name and r["arm"] in networks]


def plan_cost(plan: ModalityPlan, rows: Sequence[dict[str, Any]], plans: Sequence[ModalityPlan]) -> PlanCost:
    """The modality's cost so far and left. Runs left are priced at the mean seconds of its finished network
    runs, or of every modality's where it has none (a floor's fit takes seconds and is not priced)."""
    mine = [r for r in rows if r["modality"] == plan.name]
    log = RunLog.of_runs(mine, KEY_FIELDS)
    left = sum(runs_left(plan, arm, log) for arm in plan.arms if not arm.is_floor)
    left_floors = sum(runs_left(plan, arm, log) for arm in plan.arms if arm.is_floor)
    own = network_seconds(plan, rows)
    everyone = [s for other in plans for s in network_seconds(other, rows)]
    seconds, priced_by = (own, "its own runs") if own else (everyone, "every modality's runs")
    mean = sum(seconds) / len(seconds) if seconds else 0.0
    return PlanCost(
        runs_done=len(mine),
        hours_done=sum(float(r["seconds"]) for r in mine) / 3600,
        runs_left=left + left_floors,
        hours_left=left * mean / 3600,
        seconds_a_run=mean,
        priced_by=priced_by,
    )
