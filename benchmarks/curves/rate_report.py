"""The rate sweeps behind the curves, one row per arm and swept fraction: every rate tried with its
validation accuracy, the rate chosen, and whether it is bracketed (a smaller and a larger rate tried and
beaten) or still at an edge of its grid after the allowed extensions, so a reader sees which points may
sit below the arm's best rate without reading the log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.curves.plan import ModalityPlan
from benchmarks.curves.rates import at_edge, best_rate, rate_scores


def rate_report(plan: ModalityPlan, rows: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown lines: the rate-sweep table of the modality's network arms that have run."""
    table = []
    for arm in plan.arms:
        if arm.is_floor:
            continue
        fractions = arm.fractions_of(plan.protocol)
        for fraction in dict.fromkeys((fractions[0], fractions[-1])):
            scores = rate_scores(plan, arm.name, fraction, rows)
            if not scores:
                continue
            n_train = next(
                int(r["n_train"]) for r in rows
                if r["modality"] == plan.name and r["arm"] == arm.name and float(r["fraction"]) == fraction
            )  # fmt: skip
            tried = ", ".join(f"{lr:g}: {acc:.3f}" for lr, acc in sorted(scores.items()))
            if len(scores) == 1:
                state = "one rate so far"
            else:
                state = "**at an edge**" if at_edge(scores) else "bracketed"
            table.append(f"| {arm.name} | {n_train:,} | {tried} | {best_rate(scores):g} | {state} |")
    if not table:
        return []
    return [
        f"### {plan.name}: rate sweeps (seed {plan.protocol.seeds[0]}, validation accuracy)",
        "",
        "| arm | training examples | rates tried | chosen | |",
        "|---|---|---|---|---|",
        *table,
        "",
    ]
