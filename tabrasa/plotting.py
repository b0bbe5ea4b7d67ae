"""Matplotlib for the benchmark reports: a file backend (no display on servers) and one way to save."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, imported only when a report draws (a plain run never does)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def log_x_axes(ax: Any, *, xlabel: str, ylabel: str, title: str, legend_size: int) -> None:
    """The reports' axes: a log x (data sizes and learning rates span decades), labels, grid, legend."""
    ax.set_xscale("log")
    # Within one decade matplotlib labels the minor ticks (3×10², 4×10², ...), which overlap; the major
    # ticks and the grid are enough to read a size.
    ax.xaxis.set_minor_formatter(pyplot().NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend_size)


def save(fig: Any, path: Path) -> Path:
    """Lay out, write at 120 dpi (creating the folder), and free the figure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
    return path
