"""Text classification data: raw (text, label) splits, tokenised in the loader by the injected tokenizer.

The tokenizer is the caller's: a subword vocabulary trained on the (limited) training split
(`SubwordTokenizer`: this module hands it the training texts and a cache file, one JSON file per setting),
a vocabulary file, raw bytes, or a pretrained family's own. Texts are tokenised a batch at a time in the
loader, so no token cache is needed.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import datasets
from pytorch_lightning.utilities import rank_zero_info

from tabrasa.data.base_module import FittingData
from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.tokenizers.base import Tokenizer

REPORT_CHUNK = 1024  # texts tokenised at a time when counting truncation


class TextClassificationDataModule(TabrasaDataModule):
    """tokenizer: any text tokenizer (class_path in YAML), required: a SubwordTokenizer (its vocabulary is
    trained on this module's training split and cached), a TextTokenizer, raw bytes (ByteTokenizer), or a
    pretrained family's own (`tabrasa.pretrained.tokenizer.PretrainedTokenizer`, and with it that family's
    embedder, e.g. BERT's token-type table). Texts longer than its max_length follow its truncation and are
    counted per split."""

    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer, "
        "init_args: {vocab_size: 16000, max_length: 256, truncation: head_tail}}"
    )
    # An older tabrasa's data settings: the vocabulary's, and its file as tokenizer_path.
    moved_to_tokenizer: ClassVar[Mapping[str, str]] = {
        **{name: name for name in ("vocab_size", "subword", "lowercase", "max_length", "truncation")},
        "tokenizer_path": "path",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
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

    def fitting_data(self, learned: dict[str, Any]) -> FittingData:
        """The (limited) training texts, so a tiny run trains a tiny vocabulary, and a cache file keyed by
        the raw splits' settings and the tokenizer's (`vocab-<key>.json`, the name it has always had)."""
        key = settings_key({**self.raw_settings(), **learned})
        return (lambda: self.load_splits()["train"]["text"]), self.cache_path / f"vocab-{key}.json"


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
