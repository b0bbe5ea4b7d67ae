"""Spoken keywords: Speech Commands v2's 35 words from espeak-ng and flite, noisy, with held-out voices."""

from tabrasa.data.keywords.build import KeywordsSettings, load_or_build
from tabrasa.data.keywords.datamodule import KeywordsDataModule
from tabrasa.data.keywords.synthesis import EngineMissingError, require_engines
from tabrasa.data.keywords.words import WORDS

__all__ = [
    "WORDS",
    "EngineMissingError",
    "KeywordsDataModule",
    "KeywordsSettings",
    "load_or_build",
    "require_engines",
]
