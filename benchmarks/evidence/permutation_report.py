"""Permutation benchmark outputs: every row with its chosen rate and 95% interval, and per backbone and level
the change a fixed permutation causes, called a change only when the two intervals do not overlap."""

from __future__ import annotations

from pathlib import Path

from benchmarks.evidence.intervals import Interval
from benchmarks.evidence.permutation import PermutationRecord
from tabrasa.plotting import pyplot, save

LEVEL_NAMES = {"token": "a: token order", "element": "b: raw elements"}


def interval_of(record: PermutationRecord) -> Interval | None:
    if record.test_mean is None or record.half_width is None:
        return None
    return Interval(record.test_mean, record.half_width, record.seeds)


def _pairs(
    records: list[PermutationRecord],
) -> list[tuple[PermutationRecord | None, PermutationRecord]]:
    """(unpermuted, permuted) per modality, level and backbone, in the records' order."""
    plain = {(r.modality, r.level, r.arm): r for r in records if not r.permuted}
    return [(plain.get((r.modality, r.level, r.arm)), r) for r in records if r.permuted]


def change(plain: PermutationRecord | None, permuted: PermutationRecord) -> tuple[str, str]:
    """(permuted − unpermuted in points, whether the 95% intervals overlap)."""
    if permuted.test_mean is None:
        return ("0 by construction", "—") if permuted.note else ("—", "—")
    a, b = (None, None) if plain is None else (interval_of(plain), interval_of(permuted))
    if a is None or b is None:
        return "—", "—"
    overlap = a.low <= b.high and b.low <= a.high
    single = a.n < 2 or b.n < 2
    said = "one run: no interval" if single else ("yes: no change shown" if overlap else "no: a change")
    return f"{100 * (b.mean - a.mean):+.1f} pts", said


def _shown(record: PermutationRecord | None) -> str:
    interval = None if record is None else interval_of(record)
    return "—" if interval is None else interval.format()


def runs_table(records: list[PermutationRecord]) -> str:
    """Every arm, permuted or not, at the rate validation chose, with its 95% interval."""
    lines = [
        "| modality | level | backbone | permuted | best lr (val) | test acc (mean ± 95% t) | seeds |",
        "|---" * 7 + "|",
    ]
    for r in records:
        interval = interval_of(r)
        acc = "not run" if interval is None else interval.format()
        lr = "—" if r.best_lr is None else f"{r.best_lr:g}"
        lines.append(
            f"| {r.modality} | {LEVEL_NAMES[r.level]} | {r.arm} | {'yes' if r.permuted else 'no'} | {lr} | "
            f"{acc} | {r.seeds} |"
        )
    return "\n".join(lines) + "\n"


def change_table(records: list[PermutationRecord]) -> str:
    """Per backbone and level: accuracy before and after, the change, whether the intervals overlap; then
    each note (such as an invariance by construction) once, with the rows it is about."""
    lines = [
        "| modality | level | backbone | unpermuted | permuted | permuted − unpermuted "
        "| 95% intervals overlap |",
        "|---" * 7 + "|",
    ]
    for plain, permuted in _pairs(records):
        delta, overlap = change(plain, permuted)
        before, after = (_shown(r) for r in (plain, permuted))
        lines.append(
            f"| {permuted.modality} | {LEVEL_NAMES[permuted.level]} | {permuted.arm} | {before} | {after} | "
            f"{delta} | {overlap} |"
        )
    notes: dict[str, list[str]] = {}  # note → the rows it is about, so a shared note is said once
    for r in records:
        if r.note:
            notes.setdefault(r.note, []).append(f"{r.modality} {r.arm} ({LEVEL_NAMES[r.level]})")
    said = [f"- {', '.join(rows)}: {note}" for note, rows in notes.items()]
    return "\n".join(lines + (["", *said] if said else [])) + "\n"


def permutation_table(records: list[PermutationRecord]) -> str:
    return runs_table(records) + "\n" + change_table(records)


def plot_permutation(records: list[PermutationRecord], out_dir: Path) -> Path:
    """Test accuracy with its 95% interval, unpermuted beside permuted, one panel per level."""
    fig, axes = pyplot().subplots(1, len(LEVEL_NAMES), figsize=(11, 3.8), squeeze=False)
    for ax, level in zip(axes[0], LEVEL_NAMES, strict=True):
        pairs = [(a, b) for a, b in _pairs(records) if b.level == level and b.test_mean is not None]
        for i, (plain, permuted) in enumerate(pairs):
            for offset, record, colour in ((-0.2, plain, "tab:blue"), (0.2, permuted, "tab:orange")):
                interval = None if record is None else interval_of(record)
                if interval is not None:
                    ax.bar(i + offset, interval.mean, 0.4, yerr=interval.half_width, color=colour, capsize=3)
        ax.set_xticks(range(len(pairs)), [f"{b.modality}\n{b.arm}" for _, b in pairs], fontsize=7)
        ax.bar(0, 0, 0, color="tab:blue", label="unpermuted")
        ax.bar(0, 0, 0, color="tab:orange", label="permuted")
        ax.set_ylabel("test accuracy")
        ax.set_title(LEVEL_NAMES[level])
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7)
    return save(fig, out_dir / "permutation.png")
