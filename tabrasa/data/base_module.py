"""What every tabrasa data module holds, labelled (`TabrasaDataModule`) or not (`UnlabelledDataModule`):
the tokenizer it was handed, the loader settings, `limit`, its seed and cache folder.

A data module never picks a tokenizer: built without one it stops, naming the config lines to add
(`tokenizer_hint`). A tokenizer that learns from data (`LearnsFromData`: a subword vocabulary, mel
statistics) is fitted when it is first used, on what `fitting_data` supplies: the data module hands over
its training inputs and a cache file, the tokenizer decides what it learns from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytorch_lightning as pl
import yaml

from tabrasa.data.loader import LoaderConfig
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.learned import LearnsFromData

FittingData = tuple[Callable[[], Iterable[Any]], Path]  # (the training inputs, read lazily; the cache file)


class BaseDataModule(pl.LightningDataModule):
    """tokenizer: raw example → tensors (class_path in YAML); required. loader: batch size, workers, length
    bucketing. limit: at most this many examples per split. seed: the data's own seed (hold-outs).
    cache_dir: where prepared data is cached (default $TABRASA_CACHE or ~/.cache/tabrasa)."""

    # The `data.init_args.tokenizer` value a missing tokenizer's error suggests; each modality names its own.
    tokenizer_hint = "{class_path: tabrasa.tokenizers.<Modality>Tokenizer, init_args: {...}}"
    # Settings an older tabrasa took here that the tokenizer takes now (old name → the tokenizer's), so a
    # saved run's config is refused with the lines that replace them (`retired_settings`).
    moved_to_tokenizer: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self,
        tokenizer: Tokenizer | None = None,
        loader: LoaderConfig = LoaderConfig(),  # noqa: B008  (frozen: one shared default is safe)
        limit: int | None = None,
        seed: int = 0,
        cache_dir: str | None = None,
    ) -> None:
        super().__init__()
        if tokenizer is None:
            raise missing_tokenizer(type(self))
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
        """The preprocessing half, fitted on this module's training data first if it learns from data;
        the model builds the matching embedder from it."""
        tokenizer = self._tokenizer
        if isinstance(tokenizer, LearnsFromData) and not tokenizer.fitted:
            tokenizer.fit(*self.fitting_data(tokenizer.learned_settings()))
        return tokenizer

    def fitting_data(self, learned: dict[str, Any]) -> FittingData:
        """What a tokenizer that learns from data is fitted on: a callable giving the training split's raw
        inputs (called only when the cache file is missing) and the cache file, named by this module's
        data settings and `learned` (the tokenizer's own settings)."""
        raise UserError(
            f"{type(self).__name__} cannot fit {type(self._tokenizer).__name__}: it supplies no training "
            f"inputs for a tokenizer to learn from; give a tokenizer whose settings are all given (for a "
            f"subword vocabulary, its file as `path`)"
        )

    @classmethod
    def retired_settings(cls, init_args: Mapping[str, Any], where: str) -> None:
        """Refuse `init_args` (a config's, from `where`) that hold settings an older tabrasa took here,
        with the tokenizer lines that replace them: older runs' configs are refused, never misread."""
        moved = [name for name in cls.moved_to_tokenizer if name in init_args]
        if not moved:
            return
        if init_args.get("tokenizer") is not None:
            fix = "delete them: its tokenizer is given, and keeps its own settings"
        else:
            hint = yaml.safe_load(cls.tokenizer_hint)
            given = {
                cls.moved_to_tokenizer[name]: init_args[name] for name in moved if init_args[name] is not None
            }
            hint["init_args"] = {**hint.get("init_args", {}), **given}
            lines = yaml.safe_dump(hint, default_flow_style=True, sort_keys=False, width=1 << 16).strip()
            fix = f"replace them with `data.init_args.tokenizer: {lines}`"
        raise UserError(
            f"{where}: {cls.__name__} is given {', '.join(moved)}, settings of an older tabrasa that are "
            f"its tokenizer's now; {fix}"
        )


def missing_tokenizer(module: type[BaseDataModule]) -> UserError:
    """The one-line error for a data module built without a tokenizer: the class, the problem, the fix."""
    name = module.__name__
    return UserError(
        f"{name} was given no tokenizer, and a data module never picks one; add to the config "
        f"`data.init_args.tokenizer: {module.tokenizer_hint}` (from Python: {name}(tokenizer=...))"
    )
