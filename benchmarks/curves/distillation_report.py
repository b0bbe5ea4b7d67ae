"""The seed's distillation claim read from the curves: at each fraction the distilled student minus the same
student trained on its labels alone, with a bootstrap interval over seeds and test examples, and the teacher
each fraction had (its command, steps and validation accuracy, from the run card the teacher's `fit`
wrote)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.curves.plan import ModalityPlan
from benchmarks.curves.verdict import BOOTSTRAP, points

STUDENT, DISTILLED = "student", "distilled"


def distillation_rows(plan: ModalityPlan, curve: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per fraction both arms have run at: accuracies, the difference and its 95% interval."""
    table = points(curve, plan.name)
    rng = np.random.default_rng(0)
    out = []
    for fraction in plan.protocol.fractions:
        student, distilled = table.get((STUDENT, fraction)), table.get((DISTILLED, fraction))
        if student is None or distilled is None:
            continue
        sample = distilled.resample(rng, BOOTSTRAP) - student.resample(rng, BOOTSTRAP)
        low, high = np.percentile(sample, [2.5, 97.5])
        out.append({
            "fraction": fraction, "n_train": student.n_train,
            "seeds": min(len(student.test), len(distilled.test)),
            "student": student.acc, "distilled": distilled.acc, "gain": distilled.acc - student.acc,
            "low": float(low), "high": float(high),
        })  # fmt: skip
    return out


def distillation_report(plan: ModalityPlan, curve: Sequence[dict[str, Any]], teachers: Path) -> list[str]:
    """The report's section: a heading over distillation_tables (nothing for a modality without the arms)."""
    if not {STUDENT, DISTILLED} <= {a.name for a in plan.arms}:
        return []
    return [f"### {plan.name}: distillation", "", *distillation_tables(plan, curve, teachers)]


def distillation_tables(plan: ModalityPlan, curve: Sequence[dict[str, Any]], teachers: Path) -> list[str]:
    """The gain per fraction and the teachers behind it, as Markdown lines without a heading (the docs page
    embeds them under its own)."""
    rows = distillation_rows(plan, curve)
    if not rows:
        return ["No fraction has both the student and the distilled student yet.", ""]
    lines = ["| training examples | seeds | student | distilled | gain (points) | 95% interval | reading |"]
    lines += ["|---|---|---|---|---|---|---|"]
    for r in rows:
        reading = "helps" if r["low"] > 0 else "hurts" if r["high"] < 0 else "no effect shown"
        lines.append(
            f"| {r['n_train']} | {r['seeds']} | {r['student']:.3f} | {r['distilled']:.3f} | "
            f"{100 * r['gain']:+.1f} | [{100 * r['low']:+.1f}, {100 * r['high']:+.1f}] | {reading} |"
        )
    lines += [
        "",
        "| teacher for fraction | steps | validation accuracy | fit seconds | command |",
        "|---|---|---|---|---|",
    ]
    for card in sorted(teachers.glob("f*.json")):
        record = json.loads(card.read_text())
        accuracy = record.get("selected_on", {}).get("value", float("nan"))
        lines.append(
            f"| {card.stem.removeprefix('f')} | {record.get('global_step')} | {accuracy:.3f} | "
            f"{record.get('fit_seconds', float('nan')):.0f} | `{record.get('command', '')}` |"
        )
    return [*lines, ""]
