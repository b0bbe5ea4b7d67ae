"""Embedders and tokenizers rebuilt from the small JSON specs a `PretrainedConfig` carries.

A spec names a kind and the numbers that kind needs, so a converted checkpoint's `tabrasa.json` is enough
to rebuild the learned and the preprocessing halves of its tokenizer without the source library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.pretrained.ast_embedding import ASTEmbedder, ASTTokenizer
from tabrasa.pretrained.esm_embedding import EsmEmbedder, EsmProteinTokenizer
from tabrasa.tokenizers.base import Embedder, Tokenizer
from tabrasa.tokenizers.image import ImageEmbedder, ImageTokenizer
from tabrasa.tokenizers.text import TextEmbedder, TextTokenizer, load_subword_tokenizer


def build_embedder(spec: dict[str, Any], dim: int) -> Embedder:
    kind = spec.get("kind")
    if kind == "text":
        embedder = TextEmbedder(
            spec["vocab_size"], dim, spec.get("pad_id") or 0, spec.get("type_vocab_size", 0)
        )
        if spec.get("pad_id") is None:
            # No pad token (GPT-2): no embedding row may be frozen as padding_idx would freeze it.
            embedder.token_embed.padding_idx = None
        return embedder
    if kind == "image":
        return ImageEmbedder(spec["channels"], tuple(spec["patch_size"]), dim, cls_token=spec["cls_token"])
    if kind == "esm":
        return EsmEmbedder(dim, token_dropout=spec["token_dropout"])
    if kind == "ast":
        return ASTEmbedder(
            dim, spec["n_mels"], spec["frames"], tuple(spec["patch_size"]), tuple(spec["stride"])
        )
    raise ValueError(f"embedder spec kind={kind!r} is not known; expected text, image, esm or ast")


def build_tokenizer(spec: dict[str, Any] | None, folder: Path) -> Tokenizer | None:
    if spec is None:
        return None
    kind = spec.get("kind")
    if kind == "text":
        hf = load_subword_tokenizer(folder / spec["file"], lowercase=spec.get("lowercase", True))
        # A tokenizer.json may carry its own padding and truncation (sentence-transformers ships Fixed(128)
        # padding): every text would become 128 ids, pads unmasked, longer ones cut silently. Batching and
        # truncation are TextTokenizer's (explicit policy, counted), so the file's settings are switched off.
        hf.no_padding()
        hf.no_truncation()
        return TextTokenizer(hf, max_length=spec["max_length"], truncation=spec.get("truncation", "head"))
    if kind == "image":
        return ImageTokenizer(
            patch_size=tuple(spec["patch_size"]),
            channels=spec["channels"],
            image_size=tuple(spec["image_size"]),
            mean=spec["mean"],
            std=spec["std"],
            cls_token=spec["cls_token"],
        )
    if kind == "protein":
        return EsmProteinTokenizer(
            spec["max_length"], spec.get("truncation", "head"), token_dropout=spec["token_dropout"]
        )
    if kind == "ast":
        shape = {k: spec[k] for k in ("n_mels", "frames", "mean", "std", "sample_rate")}
        return ASTTokenizer(**shape, patch_size=tuple(spec["patch_size"]), stride=tuple(spec["stride"]))
    raise ValueError(f"tokenizer spec kind={kind!r} is not known; expected text, image, protein or ast")


def tokenizer_files(spec: dict[str, Any] | None) -> list[str]:
    """Files beside the weights that a tokenizer spec reads (copied by convert and export)."""
    return [spec["file"]] if spec and "file" in spec else []
