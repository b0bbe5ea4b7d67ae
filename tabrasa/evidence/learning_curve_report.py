"""Learning-curve outputs: a markdown table and one PNG per modality marking the crossover."""

from __future__ import annotations

from pathlib import Path

from tabrasa.evidence.arms import MODALITIES, TRANSFORMER
from tabrasa.evidence.learning_curves import Point, crossover
from tabrasa.evidence.plotting import log_x_axes, pyplot, save


def markdown_table(points: list[Point]) -> str:
    lines = [
        "| modality | backbone | fraction | train examples | best lr (val) | test acc (mean ± sd) | seeds |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in points:
        lines.append(
            f"| {p.modality} | {p.arm} | {p.fraction:g} | {p.train_examples:,} | {p.lr:g} | "
            f"{p.test_mean:.3f} ± {p.test_std:.3f} | {p.seeds} |"
        )
    lines += ["", "| modality | baseline | transformer matches or beats it from fraction |", "|---|---|---|"]
    for name in dict.fromkeys(p.modality for p in points):
        for arm in dict.fromkeys(p.arm for p in points if p.modality == name and p.arm != TRANSFORMER):
            where = crossover(points, name, arm)
            lines.append(f"| {name} | {arm} | {'never (in this range)' if where is None else f'{where:g}'} |")
    return "\n".join(lines) + "\n"


def plot_curves(points: list[Point], out_dir: Path) -> list[Path]:
    plt = pyplot()
    paths = []
    for name in dict.fromkeys(p.modality for p in points):
        fig, ax = plt.subplots(figsize=(5.5, 4))
        mine = [p for p in points if p.modality == name]
        for arm in dict.fromkeys(p.arm for p in mine):
            curve = sorted((p for p in mine if p.arm == arm), key=lambda p: p.train_examples)
            xs = [p.train_examples for p in curve]
            ax.errorbar(xs, [p.test_mean for p in curve], yerr=[p.test_std for p in curve], marker="o",
                        capsize=3, label="transformer" if arm == TRANSFORMER else arm)  # fmt: skip
            if arm != TRANSFORMER:
                where = crossover(points, name, arm)
                if where is not None:
                    x = next(p.train_examples for p in curve if p.fraction == where)
                    ax.axvline(x, linestyle=":", color="grey")
                    ax.annotate(f"transformer ≥ {arm}", (x, ax.get_ylim()[0]), fontsize=7, rotation=90)
        title = f"{name}: {MODALITIES[name].config}"
        log_x_axes(ax, xlabel="training examples", ylabel="test accuracy", title=title, legend_size=8)
        paths.append(save(fig, out_dir / f"learning_curve_{name}.png"))
    return paths
