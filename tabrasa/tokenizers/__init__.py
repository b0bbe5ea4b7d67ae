"""Tokenizers: raw input → ids or features (workers, no parameters) → learned embedder → (B, N, D) tokens."""

from tabrasa.tokenizers.audio import AudioEmbedder, AudioTokenizer
from tabrasa.tokenizers.base import Embedder, Tokenizer, Tokens
from tabrasa.tokenizers.image import ImageEmbedder, ImageTokenizer
from tabrasa.tokenizers.protein import ProteinEmbedder, ProteinTokenizer
from tabrasa.tokenizers.text import (
    TextEmbedder,
    TextTokenizer,
    load_subword_tokenizer,
    train_subword_tokenizer,
)

__all__ = [
    "AudioEmbedder",
    "AudioTokenizer",
    "Embedder",
    "ImageEmbedder",
    "ImageTokenizer",
    "ProteinEmbedder",
    "ProteinTokenizer",
    "TextEmbedder",
    "TextTokenizer",
    "Tokenizer",
    "Tokens",
    "load_subword_tokenizer",
    "train_subword_tokenizer",
]
