"""Learning-curve outputs: markdown tables (points, gaps to the best baseline, the gap's trend, floors)
and one PNG per modality with mean ± 95% interval bands."""

from __future__ import annotations

import math
from pathlib import Path

from benchmarks.evidence.arms import MODALITIES, SELF_PRETRAINED, TRANSFORMER
from benchmarks.evidence.curve_gaps import Floor, Gap, GapTrend, floors, gap_trends, gaps
from benchmarks.evidence.learning_curves import Point, crossover
from tabrasa.plotting import log_x_axes, pyplot, save

LABELS = {TRANSFORMER: "transformer", SELF_PRETRAINED: "transformer, self-pretrained"}


def _rates(p: Point) -> str:
    if len(p.rates) < 2:
        return f"{p.lr:g}"
    swept = ", ".join(f"{r:g}" for r in p.rates)
    return f"{p.lr:g} of {swept}" + ("" if p.bracketed else " (edge)")


def _accuracy(p: Point) -> str:
    if p.seeds < 2:
        return f"{p.test_mean:.3f} (1 seed)"
    return f"{p.test_mean:.3f} [{p.test_low:.3f}, {p.test_high:.3f}]"


def header(*cells: str) -> list[str]:
    return ["| " + " | ".join(cells) + " |", "|" + "---|" * len(cells)]


def point_rows(points: list[Point]) -> list[str]:
    lines = header(
        "modality", "arm", "fraction", "train examples", "lr (val) of the rates swept",
        "test acc, mean [95% interval]", "seeds",
    )  # fmt: skip
    for p in points:
        lines.append(
            f"| {p.modality} | {p.arm} | {p.fraction:g} | {p.train_examples:,} | {_rates(p)} | "
            f"{_accuracy(p)} | {p.seeds} |"
        )
    return lines


def _gap(gap: Gap | None) -> str:
    if gap is None:
        return "—"
    if len(gap.points) < 2:
        return f"{gap.mean:+.1f} (1 seed)"
    return f"{gap.mean:+.1f} [{gap.low:+.1f}, {gap.high:+.1f}]"


def gap_rows(found: list[Gap]) -> list[str]:
    lines = header(
        "modality", "fraction", "train examples", "best baseline (by val)",
        "transformer − baseline, pts [95%]", "self-pretrained − baseline, pts [95%]",
    )  # fmt: skip
    for modality, fraction in dict.fromkeys((g.modality, g.fraction) for g in found):
        by_arm = {g.arm: g for g in found if (g.modality, g.fraction) == (modality, fraction)}
        first = next(iter(by_arm.values()))
        lines.append(
            f"| {modality} | {fraction:g} | {first.train_examples:,} | {first.baseline} | "
            f"{_gap(by_arm.get(TRANSFORMER))} | {_gap(by_arm.get(SELF_PRETRAINED))} |"
        )
    return lines


def trend_rows(trends: list[GapTrend]) -> list[str]:
    lines = header("modality", "arm", "gap slope, pts per decade of data [95%]", "paired gaps")
    for t in trends:
        slope = f"{t.slope:+.1f} [{t.low:+.1f}, {t.high:+.1f}]"
        lines.append(f"| {t.modality} | {LABELS.get(t.arm, t.arm)} | {slope} | {t.n} |")
    return lines


def floor_rows(found: list[Floor]) -> list[str]:
    lines = header("modality", "floor", "best arm at full data", "clears it")
    for f in found:
        lines.append(
            f"| {f.modality} | {f.rule} = {f.floor:.3f} | {f.best_arm} {f.best_mean:.3f} | "
            f"{'yes' if f.clears else '**no**: not evidence'} |"
        )
    return lines


def crossover_rows(points: list[Point]) -> list[str]:
    lines = header("modality", "baseline", "transformer matches or beats it from fraction")
    for name in dict.fromkeys(p.modality for p in points):
        for arm in dict.fromkeys(
            p.arm for p in points if p.modality == name and p.arm not in (TRANSFORMER, SELF_PRETRAINED)
        ):
            where = crossover(points, name, arm)
            lines.append(f"| {name} | {arm} | {'never (in this range)' if where is None else f'{where:g}'} |")
    return lines


def markdown_table(points: list[Point]) -> str:
    found = gaps(points)
    sections = [point_rows(points), crossover_rows(points)]
    if found:
        sections += [gap_rows(found)]
        trends = gap_trends(found)
        if trends:
            sections += [trend_rows(trends)]
    if any(p.majority for p in points):
        rules = {name: MODALITIES[name].floor for name in MODALITIES}
        sections += [floor_rows(floors(points, rules))]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"


def plot_curves(points: list[Point], out_dir: Path) -> list[Path]:
    plt = pyplot()
    paths = []
    for name in dict.fromkeys(p.modality for p in points):
        fig, ax = plt.subplots(figsize=(5.5, 4))
        mine = [p for p in points if p.modality == name]
        for arm in dict.fromkeys(p.arm for p in mine):
            curve = sorted((p for p in mine if p.arm == arm), key=lambda p: p.train_examples)
            xs = [p.train_examples for p in curve]
            (line,) = ax.plot(xs, [p.test_mean for p in curve], marker="o", label=LABELS.get(arm, arm))
            # A point with one seed has no interval: the band has a gap there (NaN), not a zero width.
            low = [p.test_low if p.seeds > 1 else math.nan for p in curve]
            high = [p.test_high if p.seeds > 1 else math.nan for p in curve]
            ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        majority = max((p.majority for p in mine), default=0.0)
        if majority:
            ax.axhline(majority, linestyle=":", color="grey", label="majority class")
        title = f"{name}: {MODALITIES[name].config}\n(bands: 95% interval over seeds)"
        log_x_axes(ax, xlabel="training examples", ylabel="test accuracy", title=title, legend_size=8)
        paths.append(save(fig, out_dir / f"learning_curve_{name}.png"))
    return paths
