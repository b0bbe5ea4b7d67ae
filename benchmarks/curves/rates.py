"""Learning rates chosen on validation only: a bracketed sweep at the smallest and the largest fraction,
and, between them, the rate interpolated in log-rate against log-fraction and snapped to the sweep's grid.

A rate is bracketed when a smaller and a larger rate were both tried and lost on validation. A winner at an
edge of the grid extends the grid by one `rate_step` on that side, up to `bracket` times; a rate still at an
edge after that is reported as such (`edge`), never silently accepted as the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from benchmarks.curves.plan import ModalityPlan, Protocol


def snap(rate: float, protocol: Protocol) -> float:
    """The grid rate nearest to `rate` in log space: protocol.rates[0] · rate_step^k."""
    base = protocol.rates[0]
    k = round(math.log(rate / base) / math.log(protocol.rate_step))
    return float(f"{base * protocol.rate_step**k:.3g}")


def rate_scores(
    plan: ModalityPlan, arm: str, fraction: float, rows: Iterable[dict[str, Any]]
) -> dict[float, float]:
    """lr → validation accuracy of the arm's unpermuted first-seed runs at `fraction`: its rate sweep."""
    return {
        float(r["lr"]): float(r["val_acc"])
        for r in rows
        if r["modality"] == plan.name and r["arm"] == arm and float(r["fraction"]) == fraction
        and int(r["seed"]) == plan.protocol.seeds[0] and not r.get("permuted")
    }  # fmt: skip


def grid(protocol: Protocol) -> list[float]:
    return sorted({snap(r, protocol) for r in protocol.rates})


def best_rate(scores: Mapping[float, float]) -> float:
    """The rate with the best validation accuracy; ties go to the smaller rate."""
    if not scores:
        raise ValueError("no rate has run yet")
    return max(scores.items(), key=lambda item: (item[1], -item[0]))[0]


def next_rate(scores: Mapping[float, float], protocol: Protocol) -> float | None:
    """The next rate a bracketed sweep needs, or None when it is done (bracketed, or out of extensions)."""
    for rate in grid(protocol):
        if rate not in scores:
            return rate
    best = best_rate(scores)
    initial = grid(protocol)
    if best == max(scores):
        above = sum(1 for r in scores if r > initial[-1])
        if above < protocol.bracket:
            return snap(best * protocol.rate_step, protocol)
    if best == min(scores):
        below = sum(1 for r in scores if r < initial[0])
        if below < protocol.bracket:
            return snap(best / protocol.rate_step, protocol)
    return None


def at_edge(scores: Mapping[float, float]) -> bool:
    best = best_rate(scores)
    return len(scores) > 1 and best in (min(scores), max(scores))


def interpolated_rate(fraction: float, ends: Mapping[float, float], protocol: Protocol) -> float:
    """The rate for a fraction between the two swept ones (`ends`: fraction → chosen rate)."""
    if fraction in ends:
        return ends[fraction]
    (low, r_low), (high, r_high) = sorted(ends.items())
    t = (math.log(fraction) - math.log(low)) / (math.log(high) - math.log(low))
    return snap(math.exp(math.log(r_low) + t * (math.log(r_high) - math.log(r_low))), protocol)
