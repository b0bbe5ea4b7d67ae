"""Where a trained run keeps its config and checkpoints: `runs/NAME/version_N/` as `tabrasa fit` writes it.

The config is the one record of the tokenizer, backbone and head a checkpoint was trained with, so a
checkpoint without it is refused rather than guessed at.
"""

from __future__ import annotations

from pathlib import Path

from tabrasa.errors import UserError

CheckpointChoice = str  # "best", "last" or a path


def find_config(run_or_checkpoint: Path) -> Path:
    """config.yaml of a run folder, or of the run a checkpoint file sits in (`RUN/checkpoints/x.ckpt`)."""
    folder = run_or_checkpoint if run_or_checkpoint.is_dir() else run_or_checkpoint.parent
    for candidate in (folder / "config.yaml", folder.parent / "config.yaml"):
        if candidate.is_file():
            return candidate
    raise UserError(
        f"{run_or_checkpoint} has no config.yaml beside it or in its run folder; the config records the "
        f"tokenizer, backbone and head the weights belong to. Give the run folder that `tabrasa fit` wrote "
        f"(runs/NAME/version_N), or copy its config.yaml next to the checkpoint"
    )


def find_checkpoint(run_or_checkpoint: Path, choice: CheckpointChoice = "best") -> Path:
    """The checkpoint file: the path itself, or `best` (best-*.ckpt, newest) / `last` (last.ckpt) of a run."""
    if run_or_checkpoint.is_file():
        return run_or_checkpoint
    if choice not in ("best", "last"):
        path = Path(choice)
        if not path.is_file():
            raise UserError(f"checkpoint {choice} does not exist; give best, last or a .ckpt file")
        return path
    folder = run_or_checkpoint / "checkpoints"
    found = sorted(
        folder.glob("best*.ckpt" if choice == "best" else "last*.ckpt"), key=lambda p: p.stat().st_mtime
    )
    if not found and choice == "best":  # a run without validation keeps only last.ckpt
        found = sorted(folder.glob("last*.ckpt"), key=lambda p: p.stat().st_mtime)
    if not found:
        present = ", ".join(p.name for p in folder.glob("*.ckpt")) or "none"
        raise UserError(f"{folder} holds no {choice} checkpoint (present: {present}); use --ckpt PATH")
    return found[-1]


def locate_run(run_or_checkpoint: str | Path, choice: CheckpointChoice = "best") -> tuple[Path, Path]:
    """(config.yaml, checkpoint) of a run folder or of one of its checkpoint files."""
    path = Path(run_or_checkpoint)
    if not path.exists():
        raise UserError(f"{path} does not exist; give a run folder (runs/NAME/version_N) or a .ckpt file")
    return find_config(path), find_checkpoint(path, choice)
