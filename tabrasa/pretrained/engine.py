"""The one mapping engine every family shares: a declarative key map applied to a state dict, strictly.

A key map is a plain dict from source-key patterns to target keys, with `{}` standing for a layer index
(as torchtune's `_convert_weights.py`). The engine refuses to guess: a source key the map does not name,
a target key nothing fills, and a shape that does not fit are all errors that list every offending key,
because the quiet versions of these (random weights left in place, a table sliced to fit) are the
failures of other loaders. The same map, read backwards, exports a tabrasa state dict to the source layout.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import torch

Shape = tuple[int, ...]


@dataclass(frozen=True)
class To:
    """Where one source tensor goes, and how it changes on the way.

    key: the target key (`{}` = the layer index of the source pattern).
    part, parts: the source is slice `part` of `parts` equal slices along dim 0 of the target, e.g.
        query, key and value (0, 1, 2 of 3) fused into `attn.qkv`.
    transpose: the source stores a Linear weight as (in, out), as GPT-2's Conv1D does.
    squeeze: the source has this many extra leading size-1 dims (ViT's (1, N, D) position table).
    zero_parts: parts of the target the source does not store, filled with zeros (Whisper's key projection
        has no bias; a key bias only shifts every logit of a query equally, which softmax ignores, so
        export drops it without changing the model).
    drop_rows: leading rows of the source (after squeeze) that tabrasa never reads, dropped on import and
        restored as zeros on export (RoBERTa's position table starts at padding index + 1).
    zero_rows: leading rows tabrasa has but the source lacks, prepended as zeros on import and dropped on
        export, which refuses them once they are no longer zero (timm's `no_embed_class`: the class token
        takes no position, i.e. a zero row).
    """

    key: str
    part: int = 0
    parts: int = 1
    transpose: bool = False
    squeeze: int = 0
    zero_parts: tuple[int, ...] = ()
    drop_rows: int = 0
    zero_rows: int = 0

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        for _ in range(self.squeeze):
            t = t.squeeze(0)
        t = t[self.drop_rows :]
        if self.zero_rows:
            t = torch.cat([t.new_zeros(self.zero_rows, *t.shape[1:]), t])
        return t.t() if self.transpose else t

    def inverse(self, t: torch.Tensor) -> torch.Tensor:
        t = t.t() if self.transpose else t
        if self.zero_rows:
            if bool(t[: self.zero_rows].any()):
                raise CheckpointMismatchError(
                    f"{self.key}: its first {self.zero_rows} row(s) are not zero (they were trained), but "
                    f"the source layout has no place for them, so the export would change the model. Keep "
                    f"them frozen at zero when fine-tuning, or keep tabrasa's format (--to tabrasa)"
                )
            t = t[self.zero_rows :]
        if self.drop_rows:
            t = torch.cat([t.new_zeros(self.drop_rows, *t.shape[1:]), t])
        for _ in range(self.squeeze):
            t = t.unsqueeze(0)
        return t.contiguous()


@dataclass(frozen=True)
class KeyMap:
    """rules: source pattern → target (a key or a `To`). ignore: source-key globs deliberately not loaded
    (constant buffers, task heads such as BERT's pooler), each with the reason. renames: legacy suffixes
    rewritten before matching (`LayerNorm.gamma` → `LayerNorm.weight` in pre-2019 BERT files)."""

    rules: Mapping[str, str | To]
    ignore: Mapping[str, str] = field(default_factory=dict)
    renames: Mapping[str, str] = field(default_factory=dict)

    def targets(self) -> dict[str, To]:
        return {src: (t if isinstance(t, To) else To(t)) for src, t in self.rules.items()}


class CheckpointMismatchError(ValueError):
    """A checkpoint does not fit its key map or its target model; the message lists every key involved."""


def _pattern(p: str) -> re.Pattern[str]:
    return re.compile(re.escape(p).replace(r"\{\}", r"(\d+)") + r"\Z")


def _fill(p: str, layer: str | None) -> str:
    return p.replace("{}", layer) if layer is not None else p


def _listing(title: str, keys: list[str], limit: int = 40) -> str:
    shown = "\n".join(f"    {k}" for k in keys[:limit])
    more = f"\n    ... and {len(keys) - limit} more" if len(keys) > limit else ""
    return f"  {title} ({len(keys)}):\n{shown}{more}"


@dataclass
class Mapped:
    """The result of applying a key map: target tensors, and the source keys deliberately left out."""

    state: dict[str, torch.Tensor]
    ignored: list[str]


def map_keys(state: Mapping[str, torch.Tensor], key_map: KeyMap, source: str = "checkpoint") -> Mapped:
    """Rename, fuse and reshape `state` into target keys. Raises on any source key the map does not cover."""
    rules = [(_pattern(src), to) for src, to in key_map.targets().items()]
    pieces: dict[str, dict[int, torch.Tensor]] = {}
    parts_of: dict[str, int] = {}
    zeros_of: dict[str, tuple[int, ...]] = {}
    unknown, ignored, twice = [], [], []
    for raw_key, tensor in state.items():
        key = _rename(raw_key, key_map.renames)
        if any(fnmatch.fnmatchcase(key, glob) for glob in key_map.ignore):
            ignored.append(raw_key)
            continue
        for regex, to in rules:
            match = regex.match(key)
            if match:
                target = _fill(to.key, match.group(1) if match.groups() else None)
                if to.part in pieces.get(target, {}):
                    twice.append(f"{target} (again from {raw_key})")
                pieces.setdefault(target, {})[to.part] = to.forward(tensor)
                parts_of[target] = to.parts
                zeros_of[target] = to.zero_parts
                break
        else:
            unknown.append(raw_key)
    if unknown:
        raise CheckpointMismatchError(
            f"{source} has keys the key map does not know; they would be silently dropped. Check that the "
            f"family is right, or pass prefix= if every key carries one (e.g. 'bert.', 'esm.'):\n"
            + _listing("unknown source keys", sorted(unknown))
        )
    if twice:  # e.g. both LayerNorm.gamma and LayerNorm.weight: which one is meant cannot be known
        raise CheckpointMismatchError(f"{source} fills a target twice:\n" + _listing("filled twice", twice))
    out, incomplete = {}, []
    for target, parts in pieces.items():
        like = next(iter(parts.values()))
        parts |= {i: torch.zeros_like(like) for i in zeros_of[target] if i not in parts}
        if len(parts) != parts_of[target]:
            incomplete.append(f"{target} (has parts {sorted(parts)} of {parts_of[target]})")
            continue
        out[target] = parts[0] if len(parts) == 1 else torch.cat([parts[i] for i in range(len(parts))])
    if incomplete:
        raise CheckpointMismatchError(
            f"{source} lacks some of the tensors fused into one target:\n"
            + _listing("incomplete", incomplete)
        )
    return Mapped(out, sorted(ignored))


def _rename(key: str, renames: Mapping[str, str]) -> str:
    for old, new in renames.items():
        if key.endswith(old):
            return key[: len(key) - len(old)] + new
    return key


def check_fit(
    mapped: Mapping[str, torch.Tensor], expected: Mapping[str, Shape], source: str = "checkpoint"
) -> None:
    """Every expected key filled, nothing extra, every shape equal; one error lists all violations."""
    missing = sorted(set(expected) - set(mapped))
    extra = sorted(set(mapped) - set(expected))
    shapes = sorted(
        f"{k}: checkpoint {tuple(mapped[k].shape)} vs model {tuple(expected[k])}"
        for k in set(mapped) & set(expected)
        if tuple(mapped[k].shape) != tuple(expected[k])
    )
    problems = []
    if missing:
        problems.append(_listing("model keys the checkpoint does not fill (they would stay random)", missing))
    if extra:
        problems.append(_listing("checkpoint tensors with no place in the model", extra))
    if shapes:
        problems.append(_listing("shape mismatches", shapes))
    if problems:
        raise CheckpointMismatchError(
            f"{source} does not fit the model; nothing was loaded. Make the model's config match the "
            f"checkpoint's (tabrasa.pretrained.load_pretrained builds it for you):\n" + "\n".join(problems)
        )


def export_keys(state: Mapping[str, torch.Tensor], key_map: KeyMap) -> dict[str, torch.Tensor]:
    """The inverse of `map_keys`: target tensors back to source keys (ignored source keys are not made)."""
    out: dict[str, torch.Tensor] = {}
    used: set[str] = set()
    for src, to in key_map.targets().items():
        regex = _pattern(to.key)
        for key, tensor in state.items():
            match = regex.match(key)
            if not match:
                continue
            layer = match.group(1) if match.groups() else None
            piece = tensor.chunk(to.parts, dim=0)[to.part] if to.parts > 1 else tensor
            out[_fill(src, layer)] = to.inverse(piece)
            used.add(key)
    left = sorted(set(state) - used)
    if left:
        raise CheckpointMismatchError(
            "these tensors have no place in the source layout, so the export would lose them:\n"
            + _listing("unexportable keys", left)
        )
    return out


def shapes_of(module_state: Mapping[str, torch.Tensor]) -> dict[str, Shape]:
    return {k: tuple(v.shape) for k, v in module_state.items()}
