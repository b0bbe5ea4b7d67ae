"""A frozen teacher's outputs, remembered by input, so distillation pays for the teacher once per example
instead of once per example and epoch.

A teacher in eval mode is a pure function of its input: the same token ids give the same logits. Over E
epochs an in-loop teacher therefore repeats (E - 1)/E of its work, and on a CPU the teacher (MiniLM:
22M parameters) costs about fifteen student steps per batch. `TeacherOutputs` keys each example by a digest
of its own tensors with the batch's padding cut off (pad-to-longest makes the padded row depend on the other
examples in the batch), computes only the rows it has not seen, and can be kept in a file so that every
student run distilling from one teacher shares one pass of it. The file records the teacher's checkpoint
digest and is refused for any other teacher, so stale targets can never be read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn

from tabrasa.errors import UserError
from tabrasa.io import atomic_write
from tabrasa.tokenizers.base import Batch

SKIPPED = ("label", "truncated")  # what the teacher does not read: labels and the tokenizer's bookkeeping
MASK = "attention_mask"


def row_keys(batch: Batch) -> list[str]:
    """One digest per example of everything the teacher reads in it, padding excluded."""
    size = next(v.shape[0] for v in batch.values() if v.dim() > 0)
    mask = batch.get(MASK)
    keys = []
    for i in range(size):
        digest = hashlib.blake2b(digest_size=16)
        for name in sorted(set(batch) - set(SKIPPED)):
            row = batch[name][i]
            if mask is not None and name != MASK and row.dim() >= 1 and row.shape[0] == mask.shape[1]:
                row = row[mask[i].bool()]  # (real tokens, ...): the padding depends on the batch
            elif name == MASK:
                row = row.sum()  # the real length only
            digest.update(name.encode())
            digest.update(str(tuple(row.shape)).encode())
            digest.update(row.detach().cpu().contiguous().numpy().tobytes())
        keys.append(digest.hexdigest())
    return keys


class TeacherOutputs(nn.Module):
    """teacher(batch) → (B, C), computing only the examples not seen before. source: what identifies the
    teacher (a digest of its checkpoint) in a saved table."""

    def __init__(self, teacher: nn.Module, source: str) -> None:
        super().__init__()
        self.teacher = teacher
        self.source = source
        self.table: dict[str, torch.Tensor] = {}
        self.computed = 0  # examples the teacher ran on, for the run's log
        self.reused = 0

    def forward(self, batch: Batch) -> torch.Tensor:
        keys = row_keys(batch)
        first: dict[str, int] = {}  # each key's first row: an example repeated in the batch runs once
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        missing = [i for key, i in first.items() if key not in self.table]
        if missing:
            index = torch.tensor(missing)
            subset = {
                name: value.index_select(0, index.to(value.device)) if value.dim() > 0 else value
                for name, value in batch.items()
            }
            with torch.no_grad():
                outputs = self.teacher(subset).detach().float().cpu()
            for i, row in zip(missing, outputs, strict=True):
                self.table[keys[i]] = row.clone()
        self.computed += len(missing)
        self.reused += len(keys) - len(missing)
        device = next((v.device for v in batch.values()), torch.device("cpu"))
        return torch.stack([self.table[key] for key in keys]).to(device)

    def save(self, path: str | Path) -> None:
        """As safetensors (never a pickle): the outputs (K, C) as a tensor, keys and teacher in metadata."""
        keys = sorted(self.table)
        outputs = torch.stack([self.table[k] for k in keys]) if keys else torch.zeros(0)
        metadata = {"source": self.source, "keys": json.dumps(keys)}
        atomic_write(path, lambda tmp: save_file({"outputs": outputs.contiguous()}, tmp, metadata=metadata))

    def load(self, path: str | Path) -> None:
        """Add a saved table's rows; refuses a table written for another teacher."""
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            outputs = handle.get_tensor("outputs")
        if metadata.get("source") != self.source:
            raise UserError(
                f"teacher_cache {path}: written for teacher {metadata.get('source')!r}, not for this one "
                f"({self.source!r}); give each teacher its own cache file, or delete this one"
            )
        for key, row in zip(json.loads(metadata["keys"]), outputs, strict=True):
            self.table[key] = row


def checkpoint_digest(path: str | Path) -> str:
    """What names a teacher in its cache: the checkpoint file's name and a digest of its bytes."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"{Path(path).name}:{digest.hexdigest()}"
