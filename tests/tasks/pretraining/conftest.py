from __future__ import annotations

import pytest
import torch

from tabrasa.backbone.config import EncoderConfig
from tabrasa.backbone.encoder import Encoder
from tabrasa.tokenizers.text import TextTokenizer, train_subword_tokenizer

CORPUS = [
    "the film was great and the cast was wonderful",
    "a dull plot with a weak ending",
    "great acting, wonderful music, a fine film",
    "the ending was weak but the music was great",
] * 5


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture
def text_tokenizer() -> TextTokenizer:
    return TextTokenizer(train_subword_tokenizer(CORPUS, vocab_size=120), max_length=32)


def encoder(**overrides: object) -> Encoder:
    config = {"dim": 32, "depth": 2, "heads": 4, "max_len": 64, "dropout": 0.0} | overrides
    return Encoder(EncoderConfig(**config))  # type: ignore[arg-type]
