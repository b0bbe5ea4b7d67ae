"""A Lightning checkpoint dict ↔ safetensors tensors plus a JSON skeleton, with no pickle anywhere.

A Lightning checkpoint is a tree of dicts, lists and tuples whose leaves are tensors (weights, optimizer
moments, the best score) or plain values (epoch, loop counters, learning rates, hyper-parameters). The tensors
go to the safetensors body under their path in the tree (`state_dict/backbone.blocks.0.attn.qkv.weight`,
`optimizer_states/0/state/3/exp_avg`), so the keys are stable and readable by any safetensors tool; the rest
of the tree is JSON in the file's header, with each tensor replaced by `{"__tensor__": key}`.

Reading a pickle can run arbitrary code; reading this format only ever builds tensors, numbers, strings,
lists, dicts and tuples (and dataclasses defined in tabrasa itself, rebuilt from their fields).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

FORMAT_KEY = "tabrasa.format"
FORMAT_NAME = "lightning-checkpoint"
VERSION_KEY = "tabrasa.version"
VERSION = "1"
SKELETON_KEY = "tabrasa.skeleton"
# Dataclasses are rebuilt only from tabrasa's own modules; any other is read back as a dict of its fields.
TRUSTED_DATACLASS_PREFIX = "tabrasa."

Json = Any


def encode_checkpoint(checkpoint: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """checkpoint → (tensors by stable key, safetensors metadata holding the JSON skeleton)."""
    encoder = _Encoder()
    skeleton = encoder.encode(checkpoint, ())
    metadata = {
        "format": "pt",  # what Hugging Face tools look for in a torch safetensors file
        FORMAT_KEY: FORMAT_NAME,
        VERSION_KEY: VERSION,
        SKELETON_KEY: json.dumps(skeleton, separators=(",", ":")),
    }
    return encoder.tensors, metadata


def decode_skeleton(skeleton: Json, tensor: Callable[[str], torch.Tensor]) -> Any:
    """The JSON skeleton → the checkpoint tree; `tensor(key)` reads one tensor from the file."""
    if isinstance(skeleton, list):
        return [decode_skeleton(item, tensor) for item in skeleton]
    if not isinstance(skeleton, dict):
        return skeleton
    if "__tensor__" in skeleton:
        return tensor(skeleton["__tensor__"])
    if "__ndarray__" in skeleton:
        return tensor(skeleton["__ndarray__"]).numpy()
    if "__tuple__" in skeleton:
        return tuple(decode_skeleton(item, tensor) for item in skeleton["__tuple__"])
    if "__dict__" in skeleton:
        return {
            _hashable(decode_skeleton(k, tensor)): decode_skeleton(v, tensor) for k, v in skeleton["__dict__"]
        }
    if "__dataclass__" in skeleton:
        fields = {k: decode_skeleton(v, tensor) for k, v in skeleton["fields"].items()}
        return _rebuild_dataclass(skeleton["__dataclass__"], fields)
    return {k: decode_skeleton(v, tensor) for k, v in skeleton.items()}


class _Encoder:
    """Walks the tree once, collecting tensors (each with its own storage, as safetensors requires)."""

    def __init__(self) -> None:
        self.tensors: dict[str, torch.Tensor] = {}
        self._storages: set[int] = set()

    def encode(self, value: Any, path: tuple[str, ...]) -> Json:
        if isinstance(value, torch.Tensor):
            return {"__tensor__": self._add_tensor(value, path)}
        if isinstance(value, np.ndarray):
            return {"__ndarray__": self._add_tensor(torch.from_numpy(np.ascontiguousarray(value)), path)}
        if isinstance(value, np.generic):  # numpy scalars from metrics or RNG states
            return value.item()
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, list):
            return [self.encode(item, (*path, str(i))) for i, item in enumerate(value)]
        if isinstance(value, tuple):  # Adam's betas, torch.Size: tuple-ness survives the round trip
            return {"__tuple__": [self.encode(item, (*path, str(i))) for i, item in enumerate(value)]}
        if isinstance(value, dict):
            return self._encode_dict(value, path)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            fields = {
                f.name: self.encode(getattr(value, f.name), (*path, f.name))
                for f in dataclasses.fields(value)
            }
            return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
        raise TypeError(
            f"checkpoint entry {'/'.join(path) or '<root>'} is a {type(value).__module__}."
            f"{type(value).__name__}, which tabrasa's safetensors checkpoints cannot hold without pickle; "
            f"store tensors, numbers, strings, lists, tuples, dicts or dataclasses (e.g. convert it in the "
            f"callback's state_dict)"
        )

    def _encode_dict(self, value: dict[Any, Any], path: tuple[str, ...]) -> Json:
        plain = all(isinstance(k, str) and not k.startswith("__") for k in value)
        if plain:
            return {k: self.encode(v, (*path, k)) for k, v in value.items()}
        # Integer keys (optimizer state by parameter index) or reserved names: an explicit list of pairs.
        return {
            "__dict__": [[self.encode(k, path), self.encode(v, (*path, str(k)))] for k, v in value.items()]
        }

    def _add_tensor(self, value: torch.Tensor, path: tuple[str, ...]) -> str:
        key = "/".join(path) or "<root>"
        if key in self.tensors:  # two paths joined to the same string, e.g. {"a/b": x} and {"a": {"b": y}}
            key = f"{key}#{len(self.tensors)}"
        tensor = value.detach().to("cpu")
        storage = tensor.untyped_storage().data_ptr()
        # safetensors refuses views and tensors that share storage (tied weights): give those their own copy.
        if not tensor.is_contiguous() or (storage and storage in self._storages):
            tensor = tensor.contiguous().clone()
        self._storages.add(tensor.untyped_storage().data_ptr())
        self.tensors[key] = tensor
        return key


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, list | tuple) else key


def _rebuild_dataclass(name: str, fields: dict[str, Any]) -> Any:
    module_name, _, qualname = name.partition(":")
    if not module_name.startswith(TRUSTED_DATACLASS_PREFIX):
        return fields
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    if not dataclasses.is_dataclass(target):
        raise TypeError(f"checkpoint names {name} as a dataclass, but it is not one")
    return target(**fields)
