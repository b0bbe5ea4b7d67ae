"""Tokenizers: raw input → ids or features (workers, no parameters) → learned embedder → (B, N, D) tokens."""

from tabrasa.tokenizers.base import Embedder, Tokenizer, Tokens
from tabrasa.tokenizers.text import TextEmbedder, TextTokenizer, load_subword_tokenizer, train_subword_tokenizer

__all__ = [
    "Embedder",
    "TextEmbedder",
    "TextTokenizer",
    "Tokenizer",
    "Tokens",
    "load_subword_tokenizer",
    "train_subword_tokenizer",
]
