"""What every tabrasa data module holds, labelled (`TabrasaDataModule`) or not (`UnlabelledDataModule`):
the tokenizer it was given (or its default), the loader settings, `limit`, its seed and cache folder."""

from __future__ import annotations

import pytorch_lightning as pl

from tabrasa.data.loader import LoaderConfig
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Tokenizer


class BaseDataModule(pl.LightningDataModule):
    """tokenizer: raw example → tensors (None: `default_tokenizer()`). loader: batch size, workers, length
    bucketing. limit: at most this many examples per split. seed: the data's own seed (hold-outs).
    cache_dir: where prepared data is cached (default $TABRASA_CACHE or ~/.cache/tabrasa)."""

    def __init__(
        self,
        tokenizer: Tokenizer | None,
        loader: LoaderConfig,
        limit: int | None,
        seed: int,
        cache_dir: str | None,
    ) -> None:
        super().__init__()
        if limit is not None and limit < 1:
            raise UserError(f"limit={limit} must be >= 1 or None")
        self._tokenizer = tokenizer
        self.loader_config = loader
        self.limit = limit
        self.seed = seed
        self.cache_dir = cache_dir

    @property
    def batch_size(self) -> int:
        return self.loader_config.batch_size

    @property
    def tokenizer(self) -> Tokenizer:
        """The preprocessing half; the model builds the matching embedder from it."""
        if self._tokenizer is None:
            self._tokenizer = self.default_tokenizer()
        return self._tokenizer

    def default_tokenizer(self) -> Tokenizer:
        raise UserError(
            f"{type(self).__name__} has no default tokenizer; give one in the config "
            f"(data.init_args.tokenizer with a class_path)"
        )
