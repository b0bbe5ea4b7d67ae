"""The task head saved beside a converted backbone (`head.safetensors`), for `load_head: true`."""

from __future__ import annotations

from pathlib import Path

import torch

from tabrasa.errors import UserError

HEAD_FILE = "head.safetensors"


def head_state(folder: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The head weights and their metadata (task, num_outputs) written beside a converted backbone."""
    from safetensors import safe_open

    path = folder / HEAD_FILE
    if not path.exists():
        raise UserError(
            f"{folder} has no {HEAD_FILE}; load_head needs a folder written by `tabrasa convert --family "
            f"checkpoint`, or set load_head: false to start a fresh head"
        )
    with safe_open(str(path), framework="pt") as handle:
        names = list(handle.keys())
        return {k: handle.get_tensor(k) for k in names}, dict(handle.metadata() or {})
