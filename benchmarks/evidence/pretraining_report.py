"""Pretraining benchmark outputs: every arm with its chosen rate, accuracy and compute, and per task and
fraction the answer to "does self-pretraining close the gap to the inductive-bias baseline?"."""

from __future__ import annotations

from pathlib import Path

from benchmarks.evidence.pretraining_bench import ARMS, PretrainingCell
from tabrasa.plotting import log_x_axes, pyplot, save


def gap_closed(scratch: float, pretrained: float, baseline: float, noise: float = 0.0) -> float | None:
    """Share of the baseline's lead over scratch that pretraining recovers: 0 none, 1 all of it, above 1
    past the baseline, negative worse than scratch. None when the baseline does not lead by more than
    `noise` (no gap: a share of a lead inside the seeds' spread would be a ratio of noise)."""
    gap = baseline - scratch
    return None if gap <= max(noise, 0.0) else (pretrained - scratch) / gap


def seed_noise(*cells: PretrainingCell) -> float:
    """The spread below which a difference is not called one: the largest standard deviation over the
    seeds, at least one point."""
    return max(*(c.test_std for c in cells), 0.01)


def verdict(scratch: PretrainingCell, pretrained: PretrainingCell, baseline: PretrainingCell) -> str:
    """A difference smaller than the seeds' spread (the larger of the two standard deviations, at least
    one point) is not called a difference."""
    noise = seed_noise(scratch, pretrained, baseline)
    gain = pretrained.test_mean - scratch.test_mean
    if baseline.test_mean - scratch.test_mean <= noise:
        return "no gap to close (the baseline does not lead scratch beyond noise)"
    if gain <= noise:
        return "no: within noise of scratch"
    if baseline.test_mean - pretrained.test_mean <= noise:
        return "yes: level with the baseline or above"
    return "partly"


def pretraining_table(cells: list[PretrainingCell]) -> str:
    lines = [
        "| task | labels | arm | best lr (val) | val acc | test acc (mean ± sd) | seeds | backbone params "
        "| pretrain s | fine-tune s | total s |",
        "|---" * 11 + "|",
    ]
    for c in cells:
        lines.append(
            f"| {c.task} | {c.fraction:.0%} | {c.arm} | {c.best_lr:g} | {c.val_acc:.3f} | "
            f"{c.test_mean:.3f} ± {c.test_std:.3f} | {c.seeds} | {c.params:,} | {c.pretrain_seconds:.0f} | "
            f"{c.finetune_seconds:.0f} | {c.total_seconds:.0f} |"
        )
    lines += [
        "",
        "| task | labels | pretraining | − scratch | CNN − scratch | gap closed | does it close the gap? |",
        "|---" * 7 + "|",
    ]
    groups = dict.fromkeys((c.task, c.fraction) for c in cells)
    for task, fraction in groups:
        arms = {c.arm: c for c in cells if (c.task, c.fraction) == (task, fraction)}
        if not {"scratch", "cnn"} <= set(arms):
            continue
        scratch, cnn = arms["scratch"], arms["cnn"]
        for name in ("self", "larger"):
            if name not in arms:
                continue
            noise = seed_noise(scratch, arms[name], cnn)
            closed = gap_closed(scratch.test_mean, arms[name].test_mean, cnn.test_mean, noise)
            share = "—" if closed is None else f"{closed:.0%}"
            gain = 100 * (arms[name].test_mean - scratch.test_mean)
            lead = 100 * (cnn.test_mean - scratch.test_mean)
            lines.append(
                f"| {task} | {fraction:.0%} | {name} | {gain:+.1f} pts | {lead:+.1f} pts | {share} | "
                f"{verdict(scratch, arms[name], cnn)} |"
            )
    return "\n".join(lines) + "\n"


def plot_pretraining(cells: list[PretrainingCell], out_dir: Path) -> Path:
    """Test accuracy against labelled fraction, one panel per task, one line per arm."""
    tasks = list(dict.fromkeys(c.task for c in cells))
    panels = max(1, len(tasks))
    fig, axes = pyplot().subplots(1, panels, figsize=(4.2 * panels, 3.6), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=False):
        for arm in ARMS:
            mine = (c for c in cells if (c.task, c.arm) == (task, arm))
            points = sorted((c.fraction, c.test_mean, c.test_std) for c in mine)
            if points:
                xs, ys, sds = zip(*points, strict=True)
                ax.errorbar(xs, ys, yerr=sds, marker="o", capsize=3, label=arm)
        log_x_axes(
            ax, xlabel="fraction of labelled training set", ylabel="test accuracy", title=task, legend_size=7
        )
    return save(fig, out_dir / "pretraining.png")
