"""Corpora larger than RAM: encoded examples in LitData chunks, streamed back in shuffled, resumable batches.

`tabrasa data prepare … --streaming OUT` (see `streaming_prepare`) encodes every example of a data module
once and writes each split as a LitData-optimised folder (`OUT/train/index.json` + `chunk-*.bin`), and
`OUT/tabrasa-corpus.json`: the splits' sizes and chunks (bytes, SHA-256), the class names and the
tokenizer that encoded them. `StreamingDataModule(path=OUT)` reads it back through `litdata`:

- memory does not grow with the corpus: `StreamingDataset` memory-maps chunks in place and keeps at most
  four mapped per reader (litdata's LRU), so about 4 × chunk_bytes of corpus (16 MB chunks by default) is
  resident per loader worker, whatever the corpus size;
- shuffling: chunk order and the order inside windows of a chunk are permuted by (seed, epoch);
- DDP: each rank streams its own disjoint chunks (`StreamingDataset` reads the rank and world size of
  torch.distributed when the loader is built, i.e. after Lightning set up the process group);
- mid-epoch resume: `StreamingDataLoader.state_dict()` (the samples yielded so far), which Lightning saves
  in every checkpoint with the fit loop and hands back before the resumed epoch starts.

A damaged corpus (a missing or truncated chunk, a chunk whose bytes changed, a missing index) stops with a
one-line UserError naming the file before any batch is read; litdata itself would wait on a short chunk
and time out. What is stored is the evaluation-mode encoding: load-time augmentation is not replayed.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytorch_lightning as pl
import torch
from litdata import StreamingDataLoader, StreamingDataset

from tabrasa.data.loader import LoaderConfig
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.tokenizers.specs import TOKENIZER_KINDS

CORPUS_FILE = "tabrasa-corpus.json"
FORMAT = "tabrasa-streaming/1"
INDEX_FILE = "index.json"  # litdata's
Verify = Literal["size", "checksum"]
REPAIR = "write it again with `tabrasa data prepare … --streaming DIR`"


@dataclass(frozen=True)
class CorpusInfo:
    """What `tabrasa-corpus.json` says: examples per split, chunk files with their bytes and SHA-256,
    the class names (None: no labels) and the encoding tokenizer (its class and spec)."""

    path: Path
    examples: dict[str, int]
    chunks: dict[str, dict[str, dict[str, Any]]]
    class_names: list[str] | None
    tokenizer: dict[str, Any]
    fields: dict[str, str]
    source: dict[str, Any]

    @classmethod
    def read(cls, path: Path) -> CorpusInfo:
        if not path.is_dir():
            raise UserError(f"streaming corpus {path} does not exist; {REPAIR}")
        meta = path / CORPUS_FILE
        if not meta.is_file():
            raise UserError(f"{meta} is missing, so {path} is no complete tabrasa streaming corpus; {REPAIR}")
        try:
            data = json.loads(meta.read_text())
            splits = data["splits"]
            info = cls(
                path,
                {split: int(s["examples"]) for split, s in splits.items()},
                {split: dict(s["chunks"]) for split, s in splits.items()},
                data["class_names"],
                dict(data["tokenizer"]),
                dict(data["fields"]),
                dict(data.get("source", {})),
            )
        except (ValueError, KeyError, TypeError) as error:
            raise UserError(f"{meta} is damaged ({type(error).__name__}: {error}); {REPAIR}") from error
        if data.get("format") != FORMAT:
            raise UserError(f"{meta} has format {data.get('format')!r}, not {FORMAT!r}; {REPAIR}")
        return info

    @property
    def splits(self) -> list[str]:
        return list(self.examples)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_split(info: CorpusInfo, split: str, verify: Verify = "size") -> None:
    """Every chunk `split` lists is there with the bytes litdata's index and the corpus file record (and,
    with verify="checksum", the same SHA-256): a one-line UserError naming the first bad file otherwise."""
    folder = info.path / split
    index_path = folder / INDEX_FILE
    try:
        index = json.loads(index_path.read_text())
        listed = {c["filename"]: int(c["chunk_bytes"]) for c in index["chunks"]}
        stored = sum(int(c["chunk_size"]) for c in index["chunks"])
    except FileNotFoundError:
        raise UserError(f"{index_path} is missing: the {split} split is incomplete; {REPAIR}") from None
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(f"{index_path} is damaged ({type(error).__name__}); {REPAIR}") from error
    recorded = info.chunks[split]
    if set(listed) != set(recorded) or stored != info.examples[split]:
        raise UserError(f"{index_path} does not match {info.path / CORPUS_FILE} (chunks, examples); {REPAIR}")
    for name, expected in recorded.items():
        chunk = folder / name
        if not chunk.is_file():
            raise UserError(f"chunk {chunk} is missing; {REPAIR}")
        size = chunk.stat().st_size
        if size != listed[name] or size != expected["bytes"]:
            raise UserError(f"chunk {chunk} has {size} bytes, not {expected['bytes']}: truncated; {REPAIR}")
        if verify == "checksum" and file_sha256(chunk) != expected["sha256"]:
            raise UserError(f"chunk {chunk} does not match its recorded SHA-256: damaged; {REPAIR}")


def check_corpus(path: str | Path, verify: Verify = "size") -> CorpusInfo:
    """Read and check a whole corpus: sizes always (a stat per chunk), SHA-256 with verify="checksum"."""
    if verify not in ("size", "checksum"):
        raise UserError(f"verify={verify!r} is not known; choose size or checksum")
    info = CorpusInfo.read(Path(path))
    for split in info.splits:
        check_split(info, split, verify)
    return info


def tokenizer_record(tokenizer: Tokenizer) -> dict[str, Any]:
    """The tokenizer as the corpus file stores it: its class and, where it has one, its spec."""
    cls = type(tokenizer)
    to_spec = getattr(tokenizer, "to_spec", None)
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "spec": to_spec().to_json() if to_spec else None}


def rebuild_tokenizer(record: Mapping[str, Any], where: Path) -> Tokenizer:
    """The tokenizer a corpus was encoded with, from its stored spec (specs that need files cannot)."""
    module, _, name = str(record["class"]).rpartition(".")
    spec = record.get("spec")
    importlib.import_module(module)  # registers the module's tokenizer kinds
    if spec is None or spec["kind"] not in TOKENIZER_KINDS:
        raise UserError(f"{where} stores no rebuildable tokenizer ({name}); give data.init_args.tokenizer")
    cls, spec_class = TOKENIZER_KINDS[spec["kind"]]
    parsed = spec_class.from_json(spec)
    if parsed.files():
        raise UserError(f"{where}: {name} needs its files {parsed.files()}; give data.init_args.tokenizer")
    return cls.from_spec(parsed, None)


class StreamedBatches:
    """collate_fn: streamed examples (dicts of numpy arrays and numbers) → the tokenizer's padded Batch,
    plus `index` (each example's position in its split: provenance, and what resume tests compare).
    fields: the encoded tensors' dtypes, restored where storage narrowed them (int64 ids kept as int32)."""

    def __init__(self, tokenizer: Tokenizer, fields: Mapping[str, str]) -> None:
        self.tokenizer = tokenizer
        self.dtypes = {k: getattr(torch, v) for k, v in fields.items()}

    def tensor(self, name: str, value: Any) -> torch.Tensor:
        return torch.as_tensor(np.asarray(value), dtype=self.dtypes.get(name))

    def __call__(self, items: Sequence[Mapping[str, Any]]) -> Batch:
        examples = [{k: self.tensor(k, v) for k, v in item.items()} for item in items]
        batch = self.tokenizer.collate(examples)
        batch["index"] = torch.stack([e["index"] for e in examples])
        return batch


class StreamingDataModule(pl.LightningDataModule):
    """path: a corpus written by `tabrasa data prepare … --streaming PATH`. tokenizer: None rebuilds the one
    that encoded it; a given one must equal it. loader: batch size and workers (no length bucketing: the
    order is litdata's). seed: the shuffle's seed (each epoch reshuffles with it). verify: "size" (a stat per
    chunk at setup) or "checksum" (also SHA-256, reading every chunk once)."""

    def __init__(
        self,
        path: str,
        tokenizer: Tokenizer | None = None,
        loader: LoaderConfig = LoaderConfig(),  # noqa: B008  (frozen: one shared default is safe)
        seed: int = 0,
        verify: Verify = "size",
    ) -> None:
        super().__init__()
        if loader.bucket_by_length:
            raise UserError("loader.bucket_by_length is not available for streaming corpora; set it false")
        self.path = Path(path)
        self.loader_config = loader
        self.seed = seed
        self.info = check_corpus(self.path, verify)
        self._tokenizer = tokenizer
        if tokenizer is not None and tokenizer_record(tokenizer) != self.info.tokenizer:
            raise UserError(
                f"the tokenizer {tokenizer_record(tokenizer)} is not the one {self.path} was encoded with "
                f"({self.info.tokenizer}); drop data.init_args.tokenizer or prepare the corpus again"
            )

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = rebuild_tokenizer(self.info.tokenizer, self.path / CORPUS_FILE)
        return self._tokenizer

    @property
    def class_names(self) -> list[str] | None:
        return self.info.class_names

    @property
    def num_outputs(self) -> int:
        """Classes for the head; 0 for a corpus without labels (pretraining)."""
        return len(self.class_names or [])

    @property
    def has_test_split(self) -> bool:
        return "test" in self.info.examples

    @property
    def split_sizes(self) -> dict[str, int]:
        return dict(self.info.examples)

    @property
    def split_record(self) -> dict[str, Any] | None:
        """How the source module split its examples (the run card's data.split), as the corpus recorded."""
        return self.info.source.get("split")

    def dataset(self, split: str, shuffle: bool = False) -> StreamingDataset:
        if split not in self.info.examples:
            raise UserError(f"{self.path} has splits {self.info.splits}, not {split!r}")
        return StreamingDataset(str(self.path / split), shuffle=shuffle, seed=self.seed)

    def loader(self, split: str, shuffle: bool = False) -> StreamingDataLoader:
        config = self.loader_config
        return StreamingDataLoader(
            self.dataset(split, shuffle),
            batch_size=config.batch_size,
            num_workers=config.num_workers,
            collate_fn=StreamedBatches(self.tokenizer, self.info.fields),
            persistent_workers=config.num_workers > 0,
        )

    def train_dataloader(self) -> StreamingDataLoader:
        return self.loader("train", shuffle=True)

    def val_dataloader(self) -> StreamingDataLoader:
        return self.loader("validation")

    def test_dataloader(self) -> StreamingDataLoader:
        return self.loader("test")

    def predict_dataloader(self) -> StreamingDataLoader:
        return self.loader("test")
