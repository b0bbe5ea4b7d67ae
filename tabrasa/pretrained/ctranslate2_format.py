"""Reading CTranslate2's `model.bin` without CTranslate2: a flat list of named arrays.

The layout is the one `ctranslate2.specs.model_spec.ModelSpec._serialize` writes (little-endian):
    u32 version, string spec name, u32 revision, u32 count, then per variable:
    string name, u8 rank, u32 × rank shape, u8 dtype id, u32 byte count, the bytes;
    then u32 alias count and (string alias, string target) pairs.
A string is a u16 length (counting a trailing NUL), the UTF-8 bytes and the NUL. Scalars such as
`encoder/num_heads` are variables of rank 0.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import torch

# The order of CTranslate2's DataType enum (include/ctranslate2/types.h).
DTYPES = (np.float32, np.int8, np.int16, np.int32, np.float16, None)  # None: bfloat16, read via torch
SUPPORTED_VERSIONS = (5, 6)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.take("H")
        text = self.data[self.pos : self.pos + length - 1].decode("utf-8")
        self.pos += length
        return text

    def array(self, shape: tuple[int, ...], dtype_id: int, size: int) -> torch.Tensor:
        raw = self.data[self.pos : self.pos + size]
        self.pos += size
        if DTYPES[dtype_id] is None:
            return torch.frombuffer(bytearray(raw), dtype=torch.bfloat16).reshape(shape).clone()
        return torch.from_numpy(np.frombuffer(raw, dtype=DTYPES[dtype_id]).reshape(shape).copy())


def read_ctranslate2(path: str | Path) -> dict[str, torch.Tensor]:
    """Every variable of a CTranslate2 model file by its name (`encoder/layer_0/...`), aliases resolved."""
    reader = _Reader(Path(path).read_bytes())
    version = reader.take("I")
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(
            f"{path}: CTranslate2 binary version {version}; this reader knows {SUPPORTED_VERSIONS}"
        )
    reader.string()  # the spec's name, e.g. WhisperSpec
    reader.take("I")  # the spec's revision
    state: dict[str, torch.Tensor] = {}
    for _ in range(reader.take("I")):
        name = reader.string()
        shape = tuple(reader.take("I") for _ in range(reader.take("B")))
        dtype_id, size = reader.take("B"), reader.take("I")
        state[name] = reader.array(shape, dtype_id, size)
    for _ in range(reader.take("I")):
        alias, target = reader.string(), reader.string()
        state[alias] = state[target]
    return state
