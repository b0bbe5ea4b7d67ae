"""The sweep's log as machine-readable tables and a markdown report:

- points.csv: one row a run (the curves and the rate sweeps), the columns the docs tables read;
- permutation/summary.csv: per (modality, arm) the accuracy with and without the fixed permutation;
- report.md: per modality the curve with Wilson intervals, the gap, slope and closing size, and the cost;
  per modality the rate sweeps, each chosen rate bracketed or at an edge (benchmarks.curves.rate_report);
  for text, the distilled student against the same student (benchmarks.curves.distillation_report).
"""

from __future__ import annotations

import csv
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.curves.distillation_report import distillation_report
from benchmarks.curves.early_stopped_run import KEY_FIELDS
from benchmarks.curves.permutation_rate import PermutationRate, first_seed_permuted, permutation_rate
from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.plan_cost import MeasuredPrices, measured_prices, plan_cost, priced_by
from benchmarks.curves.rate_report import rate_report
from benchmarks.curves.rates import best_rate, interpolated_rate, rate_scores
from benchmarks.curves.sweep import curve_finished
from benchmarks.curves.verdict import BOOTSTRAP, points, verdict
from benchmarks.evidence.rate_sweep import RunLog
from benchmarks.evidence.report import UNTRAINED_MARGIN, untrained_below

Plans = dict[str, ModalityPlan]
POINT_COLUMNS = (
    "modality", "arm", "fraction", "n_train", "seed", "lr", "steps", "epochs", "stopped", "converged",
    "best_epoch", "val_acc", "test_acc", "n_test", "params", "seconds", "curve",
)  # fmt: skip
PERMUTATION_COLUMNS = (
    "modality", "arm", "level", "seeds", "acc", "acc_permuted", "delta", "delta_low", "delta_high",
)  # fmt: skip


def chosen_rates(plan: ModalityPlan, rows: Sequence[dict[str, Any]], arm: str) -> dict[float, float] | None:
    """fraction → the rate the sweep chose (validation only), or None while a rate sweep is unfinished."""
    protocol = plan.protocol
    fractions = plan.arm(arm).fractions_of(protocol)
    ends = {}
    for fraction in (fractions[0], fractions[-1]):
        scores = rate_scores(plan, arm, fraction, rows)
        if not scores:
            return None
        ends[fraction] = best_rate(scores)
    return {f: interpolated_rate(f, ends, protocol) for f in fractions}


def curve_rows(rows: Sequence[dict[str, Any]], plans: Plans) -> list[dict[str, Any]]:
    """The unpermuted runs at their arm's chosen rate: the points the curves are drawn from."""
    kept = []
    rates_of: dict[tuple[str, str], dict[float, float] | None] = {}
    for row in rows:
        plan = plans.get(row["modality"])
        if plan is None or row["arm"] not in {a.name for a in plan.arms}:
            continue
        if row.get("permuted"):
            continue
        if plan.arm(row["arm"]).is_floor:
            kept.append(row)
            continue
        key = (plan.name, row["arm"])
        if key not in rates_of:  # one rate choice per arm, not per row
            rates_of[key] = chosen_rates(plan, rows, row["arm"])
        rates = rates_of[key]
        if rates is not None and float(row["lr"]) == rates.get(float(row["fraction"])):
            kept.append(row)
    return kept


def write_points(rows: Sequence[dict[str, Any]], plans: Plans, path: Path) -> None:
    on_curve = {id(r) for r in curve_rows(rows, plans)}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, POINT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            if not row.get("permuted"):
                writer.writerow({**row, "curve": id(row) in on_curve})


def arm_rng(modality: str, arm: str) -> np.random.Generator:
    """A bootstrap stream of the arm's own, so its interval stays put as other arms' runs come and go
    (one stream shared in table order moved every later arm's interval when an arm was added)."""
    return np.random.default_rng([0, zlib.crc32(f"{modality}/{arm}".encode())])


def arm_permutation_rate(
    plan: ModalityPlan, arm: Arm, rows: Sequence[dict[str, Any]]
) -> PermutationRate | None:
    """The arm's permuted rate (benchmarks.curves.permutation_rate), or None for an arm without one (a floor,
    an arm outside the test, or one whose rate sweep has not run)."""
    rates = None if arm.is_floor or not arm.permutation_test else chosen_rates(plan, rows, arm.name)
    if rates is None:
        return None
    return permutation_rate(plan, arm, rates[arm.fractions_of(plan.protocol)[-1]], rows)


def permuted_rows(rows: Sequence[dict[str, Any]], plans: Plans) -> list[dict[str, Any]]:
    """The permuted runs at their arm's permuted rate: a first-seed run that did not train at another rate
    stays in the log, out of the test."""
    kept = []
    for name, plan in plans.items():
        for arm in plan.arms:
            if (chosen := arm_permutation_rate(plan, arm, rows)) is None:
                continue
            mine = [r for r in rows if r["modality"] == name and r["arm"] == arm.name and r.get("permuted")]
            kept += [r for r in mine if float(r["lr"]) == chosen.rate]
    return kept


def permuted_fallback_lines(plan: ModalityPlan, rows: Sequence[dict[str, Any]]) -> list[str]:
    """A line per arm whose permuted runs left its chosen rate because the first seed's did not train."""
    lines = []
    for arm in plan.arms:
        if (chosen := arm_permutation_rate(plan, arm, rows)) is None:
            continue
        first_seed = first_seed_permuted(plan, arm, rows)
        failed = []
        for rate in chosen.untrained:
            row = first_seed[rate]
            majority = float(row["val_majority"])
            failed.append(
                f"{rate:g} (validation {row['val_acc']:.3f}, below {untrained_below(majority):.3f}:"
                f" a constant guess's {majority:.3f} + {UNTRAINED_MARGIN:.0%} of the rest)"
            )
        if not failed:
            continue
        if chosen.rate in chosen.untrained:  # the rate was not the cause: the shuffle's loss, reported
            state = f"Permuted {arm.name} runs stay at {chosen.rate:g}, the better on validation: not the"
            state += f" rate, since the first seed's permuted run trained at neither {' nor '.join(failed)}"
        else:
            state = f"Permuted {arm.name} runs {'train at' if chosen.decided else 'try'} {chosen.rate:g}"
            state += f"{'' if chosen.decided else ' next'}: the first seed's permuted run did not train at"
            state += f" {'; nor at '.join(failed)}"
        lines += ["", f"{state}. The rule: benchmarks/curves/permutation_rate.py."]
    return lines


def permutation_rows(rows: Sequence[dict[str, Any]], plans: Plans) -> list[dict[str, Any]]:
    out = []
    tested, on_curve = permuted_rows(rows, plans), curve_rows(rows, plans)
    for name, plan in plans.items():
        permuted = points(tested, name, permuted=True)
        plain = points(on_curve, name)
        for (arm, fraction), shuffled in sorted(permuted.items()):
            base = plain.get((arm, fraction))
            # base exists only for the plan's arms (curve_rows); a permuted run logged before its arm left
            # the test is kept in the log, not reported
            if base is None or not plan.arm(arm).permutation_test:
                continue
            rng = arm_rng(name, arm)
            sample = shuffled.resample(rng, BOOTSTRAP) - base.resample(rng, BOOTSTRAP)
            low, high = np.percentile(sample, [2.5, 97.5])
            out.append({
                "modality": name, "arm": arm, "level": plan.permutation_level, "seeds": len(shuffled.test),
                "acc": round(base.acc, 4), "acc_permuted": round(shuffled.acc, 4),
                "delta": round(shuffled.acc - base.acc, 4), "delta_low": round(float(low), 4),
                "delta_high": round(float(high), 4),
            })  # fmt: skip
    return out


def write_permutation(rows: Sequence[dict[str, Any]], plans: Plans, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, PERMUTATION_COLUMNS)
        writer.writeheader()
        writer.writerows(permutation_rows(rows, plans))


def modality_report(
    plan: ModalityPlan, rows: Sequence[dict[str, Any]], plans: Plans, measured: MeasuredPrices | None = None
) -> list[str]:
    """The modality's section of the report; `measured`: the arms' measured prices, for what is left."""
    table = points(curve_rows(rows, plans), plan.name)
    if not table:
        return [f"## {plan.name}", "", "No run yet.", ""]
    lines = [f"## {plan.name}", "", "| arm | " + " | ".join(f"{f:g}" for f in plan.protocol.fractions) + " |"]
    lines.append("|---" * (len(plan.protocol.fractions) + 1) + "|")
    for arm in plan.arms:
        cells = []
        for fraction in plan.protocol.fractions:
            point = table.get((arm.name, fraction))
            if point is None:
                cells.append("—")
                continue
            low, high = point.interval
            cells.append(f"{point.acc:.3f} [{low:.3f}, {high:.3f}] ({len(point.test)})")
        lines.append(f"| {arm.name} | " + " | ".join(cells) + " |")
    # Only finished curves enter the verdict: the best baseline is chosen per fraction, so an arm that has run
    # at some fractions only (its rate sweep open) would swap baselines between fractions and bend the slope.
    mine = [r for r in rows if r["modality"] == plan.name]
    log = RunLog.of_runs(mine, KEY_FIELDS)
    finished = {a.name for a in plan.arms if curve_finished(plan, a, log)}
    baselines = [a.name for a in plan.arms if a.baseline and a.name in finished]
    unfinished = [a.name for a in plan.arms if a.baseline and a.name not in finished]
    try:
        if "transformer" not in finished:
            raise LookupError("the transformer's curve is unfinished")
        result = verdict(table, "transformer", baselines)
    except LookupError as why:
        lines += ["", f"Verdict: not yet ({why})."]
    else:
        lines += ["", "| training examples | best baseline (validation) | gap | 95% interval |"]
        lines += ["|---|---|---|---|"]
        for g in result.gaps:
            interval = f"[{100 * g.low:+.1f}, {100 * g.high:+.1f}]"
            lines.append(f"| {g.n_train} | {g.baseline} | {100 * g.gap:+.1f} | {interval} |")
        slope = f"[{100 * result.slope_low:+.1f}, {100 * result.slope_high:+.1f}]"
        reading = (
            f"Gap slope: {100 * result.slope:+.1f} points per decade {slope}; reading: **{result.reading}**"
        )
        if result.closes_at is not None:
            reading += f", at about {result.closes_at:,.0f} examples"
            reading += f" [{result.closes_low:,.0f}, {result.closes_high:,.0f}]"
        if result.missing:
            left_out = ", ".join(f"{f:g}" for f in result.missing)
            reading += f" (from the fractions both have run at; no baseline yet at {left_out})"
        lines += ["", reading]
    if unfinished:
        lines += ["", f"Left out of the verdict until their curves finish: {', '.join(unfinished)}."]
    lines += permuted_fallback_lines(plan, rows)
    open_runs = sum(1 for r in mine if not r.get("converged"))
    cost = plan_cost(plan, rows, list(plans.values()), measured)
    lines += [
        "",
        f"Cost so far: {cost.runs_done} runs, {cost.hours_done:.2f} lane-hours; {open_runs} runs not",
    ]
    lines += ["converged (best validation at their last evaluation)."]
    lines += [f"Left in the plan: at least {cost.runs_left} runs, about {cost.hours_left:.1f} lane-hours."]
    if cost.arms:  # benchmarks/curves/plan_cost.py says how a run is priced
        by_arm = "; ".join(f"{a.arm} {a.runs_left} runs, {a.hours_left:.1f} lane-hours" for a in cost.arms)
        lines += [f"By arm, each run priced at its fraction by {priced_by(cost)}:", f"{by_arm}."]
    lines += [""]
    return lines + solver_cost_lines(mine)


def solver_cost_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per continuous-depth arm, its solver's evaluations of f: a forward solve's and the runs' total.
    Runs recorded before the count was kept are named, not guessed."""
    lines = []
    for arm in dict.fromkeys(r["arm"] for r in rows if "nfe" in r):
        runs = [r for r in rows if r["arm"] == arm]
        counted = [r for r in runs if "nfe" in r]
        per_solve = sorted({int(r["nfe"]) for r in counted})
        total = sum(int(r["nfe_total"]) for r in counted)
        line = (
            f"Solver cost of {arm}: {'/'.join(map(str, per_solve))} evaluations of f a forward solve;"
            f" {total:,} over {len(counted)} runs ({total / len(counted):,.0f} a run)"
        )
        uncounted = len(runs) - len(counted)
        if uncounted:
            line += f"; {uncounted} earlier {'run' if uncounted == 1 else 'runs'} did not record it"
        lines += [line + ".", ""]
    return lines


def write_report(rows: Sequence[dict[str, Any]], plans: Plans, path: Path) -> None:
    lines = [
        "# Data-using learning curves",
        "",
        "Written by `python -m benchmarks.bench_curves` from runs.jsonl.",
        "",
    ]
    measured = measured_prices(path.parent / "arm_cost")  # benchmarks/bench_arm_cost.py writes them there
    costs = [plan_cost(plan, rows, list(plans.values()), measured) for plan in plans.values()]
    done, left = sum(c.hours_done for c in costs), sum(c.hours_left for c in costs)
    lines += [
        f"The whole plan: {done:.1f} lane-hours run, about {left:.0f} left",
        f"({sum(c.runs_left for c in costs)} runs at least; a rate sweep still open may add runs, and",
        "pretraining is not counted).",
        "",
    ]
    curve = curve_rows(rows, plans)
    for plan in plans.values():
        lines += modality_report(plan, rows, plans, measured)
        lines += rate_report(plan, rows)
        lines += distillation_report(plan, curve, path.parent / "teachers")
    path.write_text("\n".join(lines) + "\n")
