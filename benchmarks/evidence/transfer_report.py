"""Transfer outputs: the grid as a markdown table, the pretraining gain at the best and at fixed rates,
and one PNG of test accuracy against learning rate per modality (where a fixed rate would mislead)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.evidence.transfer import FREEZES, TransferCell, pretraining_gain
from tabrasa.plotting import log_x_axes, pyplot, save


def transfer_table(cells: list[TransferCell]) -> str:
    rates = list(cells[0].test_by_lr) if cells else []
    lines = [
        "| modality | init | backbone | trainable backbone params | best lr (val) | test acc (mean ± sd) "
        + "| seeds | "
        + " | ".join(f"test @ {r}" for r in rates) + " |",
        "|---" * (7 + len(rates)) + "|",
    ]  # fmt: skip
    for c in cells:
        by_lr = " | ".join(f"{c.test_by_lr[r]:.3f}" for r in rates)
        lines.append(
            f"| {c.modality} | {c.init} | {c.freeze} | {c.trainable_backbone_params:,} | {c.best_lr:g} | "
            f"{c.test_mean:.3f} ± {c.test_std:.3f} | {c.seeds} | {by_lr} |"
        )
    lines += [
        "",
        "| modality | backbone | pretrained − random, each at its best rate | "
        + " | ".join(f"at lr {r} for both" for r in rates) + " | the sign flips with the rate |",
        "|---" * (4 + len(rates)) + "|",
    ]  # fmt: skip
    for name in dict.fromkeys(c.modality for c in cells):
        for freeze in FREEZES:
            best = pretraining_gain(cells, name, freeze)
            if best is None:
                continue
            fixed = [pretraining_gain(cells, name, freeze, r) for r in rates]
            signs = {g > 0 for g in [best, *fixed] if g is not None and g != 0}  # type: ignore[operator]
            cols = " | ".join(f"{100 * g:+.1f} pts" for g in fixed)  # type: ignore[operator]
            flips = "yes" if len(signs) > 1 else "no"
            lines.append(f"| {name} | {freeze} | {100 * best:+.1f} pts | {cols} | {flips} |")
    return "\n".join(lines) + "\n"


def plot_transfer(cells: list[TransferCell], out_dir: Path) -> Path:
    names = list(dict.fromkeys(c.modality for c in cells))
    fig, axes = pyplot().subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        for c in (c for c in cells if c.modality == name):
            rates = [float(r) for r in c.test_by_lr]
            style = "-" if c.init == "pretrained" else "--"
            ax.plot(rates, list(c.test_by_lr.values()), style, marker="o", label=f"{c.init}, {c.freeze}")
        title = f"{name}: MiniLM backbone"
        log_x_axes(ax, xlabel="learning rate", ylabel="test accuracy (seed 0)", title=title, legend_size=7)
    return save(fig, out_dir / "transfer.png")
