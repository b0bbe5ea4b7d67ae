"""Write a data module's splits as a streaming corpus: `litdata.optimize` over shards of encoded examples.

Each example is encoded once by the data module's own tokenizer in evaluation mode and stored as its
tensors (token ids for text and proteins), its `label` where the module has labels, and its `index` in the
split. The corpus is optimised into a temporary sibling of OUT, checked (sizes and SHA-256 of every
chunk), and renamed onto OUT in one step, so an interrupted run leaves nothing at OUT and an existing
corpus is never overwritten.

litdata's optimize has process-wide side effects that a library call must not leave behind: it sets
multiprocessing's start method (force=True), reseeds random, numpy and torch, replaces the SIGINT handler
and empties its scratch folders under the system temp dir (shared by every optimize on the machine). The
call is wrapped to point the scratch folders at a private directory and to restore the rest afterwards.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from litdata import optimize

from tabrasa.data.streaming import (
    CORPUS_FILE,
    FORMAT,
    INDEX_FILE,
    check_corpus,
    file_sha256,
    tokenizer_record,
)
from tabrasa.errors import UserError
from tabrasa.io import atomic_write
from tabrasa.tokenizers.base import Tokenizer, in_mode

SPLIT_ORDER = ("train", "validation", "test")
INT32_MAX = 2**31 - 1


class Streamable(Protocol):
    """What a corpus is written from: a labelled TabrasaDataModule or an UnlabelledDataModule."""

    @property
    def tokenizer(self) -> Tokenizer: ...

    @property
    def class_names(self) -> Any: ...

    has_test_split: bool

    def dataset(self, split: str) -> Any: ...


def shards(length: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, length)) for start in range(0, length, size)]


def plain(value: torch.Tensor) -> Any:
    """A tensor as litdata stores it: 0-d as a Python number, otherwise a numpy array; int64 ids as int32
    (half the bytes; every vocabulary fits), restored on reading from the dtypes the corpus file records."""
    if value.ndim == 0:
        return value.item()
    if value.dtype == torch.int64:
        if value.numel() and (int(value.max()) > INT32_MAX or int(value.min()) < -INT32_MAX):
            raise UserError(f"an encoded value ({int(value.abs().max())}) does not fit int32 storage")
        return value.numpy().astype(np.int32)
    return value.numpy()


class EncodeShard:
    """optimize's fn: (start, stop) of one split → its examples, encoded one by one (a generator, so a
    worker holds one shard at a time). `fetch` is the split's EncodedDataset.fetch: raw inputs, labels."""

    def __init__(self, fetch: Callable[[list[int]], tuple[Any, Any]], tokenizer: Tokenizer) -> None:
        self.fetch = fetch
        self.tokenizer = tokenizer

    def __call__(self, shard: tuple[int, int]) -> Iterator[dict[str, Any]]:
        indices = list(range(*shard))
        raws, labels = self.fetch(indices)
        for position, (index, raw) in enumerate(zip(indices, raws, strict=True)):
            encoded = {k: plain(v) for k, v in self.tokenizer.encode(raw).items()}
            encoded.pop("label", None)  # the module's label column is the one stored
            if labels is not None:
                encoded["label"] = int(labels[position])
            yield {"index": index, **encoded}


@contextlib.contextmanager
def contained_optimize(scratch: Path) -> Iterator[None]:
    """Run litdata.optimize without its process-wide side effects (see the module docstring)."""
    saved_env = {
        k: os.environ.get(k) for k in ("DATA_OPTIMIZER_CACHE_FOLDER", "DATA_OPTIMIZER_DATA_CACHE_FOLDER")
    }
    os.environ["DATA_OPTIMIZER_CACHE_FOLDER"] = str(scratch / "chunks")
    os.environ["DATA_OPTIMIZER_DATA_CACHE_FOLDER"] = str(scratch / "data")
    start_method = multiprocessing.get_start_method(allow_none=True)
    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    sigint = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        multiprocessing.set_start_method(start_method, force=True)
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
        signal.signal(signal.SIGINT, sigint)


def write_split(
    fn: EncodeShard, length: int, folder: Path, chunk_bytes: str, num_workers: int, shard: int
) -> None:
    with tempfile.TemporaryDirectory(prefix="tabrasa-litdata-") as scratch, contained_optimize(Path(scratch)):
        optimize(
            fn=fn,
            inputs=shards(length, shard),
            output_dir=str(folder),
            chunk_bytes=chunk_bytes,
            num_workers=num_workers,
            reorder_files=False,
            keep_data_ordered=True,  # chunks follow the split's order; workers take contiguous shards
            start_method="fork",  # workers inherit the data module instead of unpickling a copy of it
            verbose=False,
        )


def field_dtypes(tokenizer: Tokenizer, fetch: Callable[[list[int]], tuple[Any, Any]]) -> dict[str, str]:
    """Each encoded tensor's dtype (from the first training example), to restore what storage narrowed."""
    raws, _ = fetch([0])
    return {k: str(v.dtype).removeprefix("torch.") for k, v in tokenizer.encode(raws[0]).items()}


def split_names(data: Streamable) -> list[str]:
    return [s for s in SPLIT_ORDER if s != "test" or getattr(data, "has_test_split", True)]


def chunk_records(folder: Path) -> dict[str, dict[str, Any]]:
    index = json.loads((folder / INDEX_FILE).read_text())
    return {
        c["filename"]: {"bytes": int(c["chunk_bytes"]), "sha256": file_sha256(folder / c["filename"])}
        for c in index["chunks"]
    }


def write_streaming_corpus(
    data: Streamable,
    out: str | Path,
    chunk_bytes: str = "16MB",
    num_workers: int = 1,
    shard: int = 512,
) -> Path:
    """Encode every split of `data` (after its setup) into a streaming corpus at `out`, atomically.

    chunk_bytes: the size litdata cuts chunks at; a reader keeps up to four mapped, so this bounds the
    corpus bytes resident per loader worker (16 MB: ~64 MB; litdata's own default of 64 MB: ~256 MB).
    num_workers: encoding processes. shard: examples per optimize input (one fetch call each)."""
    out = Path(out)
    if num_workers < 1 or shard < 1:
        raise UserError(f"num_workers={num_workers} and shard={shard} must be >= 1")
    if out.exists():
        raise UserError(f"{out} exists; remove it or choose another folder (a corpus is never overwritten)")
    tokenizer = in_mode(data.tokenizer, training=False)
    datasets = {split: data.dataset(split) for split in split_names(data)}
    unreadable = [s for s, d in datasets.items() if not callable(getattr(d, "fetch", None))]
    if unreadable:
        raise UserError(f"{type(data).__name__} serves no raw examples (EncodedDataset.fetch) to write")
    classes = list(data.class_names) if getattr(data, "num_outputs", 0) else None
    source = {
        "class": f"{type(data).__module__}.{type(data).__qualname__}",
        "split": getattr(data, "split_record", None),  # e.g. the homology split's settings
    }
    meta: dict[str, Any] = {
        "format": FORMAT,
        "source": source,
        "class_names": classes,
        "tokenizer": tokenizer_record(tokenizer),
        "fields": field_dtypes(tokenizer, datasets["train"].fetch),
        "splits": {},
    }

    def write(tmp: Path) -> None:
        for split, dataset in datasets.items():
            length = len(dataset)
            if length == 0:
                raise UserError(f"{type(data).__name__} has no {split} examples to write")
            write_split(
                EncodeShard(dataset.fetch, tokenizer), length, tmp / split, chunk_bytes, num_workers, shard
            )
            meta["splits"][split] = {"examples": length, "chunks": chunk_records(tmp / split)}
        (tmp / CORPUS_FILE).write_text(json.dumps(meta, indent=1) + "\n")
        check_corpus(tmp, verify="checksum")  # what is published was read back whole once

    atomic_write(out, write)
    return out
