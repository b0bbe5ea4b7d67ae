"""Token labels for attention heatmaps: the string each token id stands for, where a tokenizer has one.

Image patches and audio frames have no names; their place is their grid position, drawn as an overlay.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.protein import ESM_ALPHABET, ProteinTokenizer
from tabrasa.tokenizers.text import TextTokenizer

BYTE_SPECIALS = {256: "<pad>", 257: "<cls>", 258: "<eos>", 259: "<mask>"}
BYTE_PAD = 256


def id_namer(tokenizer: Tokenizer) -> Callable[[int], str] | None:
    """id → token string for text, byte and protein tokenizers; None for any other."""
    tokenizer = getattr(tokenizer, "inner", tokenizer)  # a PretrainedTokenizer wraps the family's own
    if isinstance(tokenizer, TextTokenizer):
        hf = tokenizer.hf
        return lambda i: hf.id_to_token(i) or f"#{i}"
    if isinstance(tokenizer, ProteinTokenizer):
        return lambda i: ESM_ALPHABET[i]
    if isinstance(tokenizer, ByteTokenizer):
        return lambda i: BYTE_SPECIALS.get(i) or bytes([i]).decode("latin-1")
    return None


def token_labels(
    tokenizer: Tokenizer, batch: Mapping[str, torch.Tensor], registers: int = 0
) -> list[list[str]] | None:
    """Per example, one label per encoder token: `registers` register tokens ([reg0], …) then the ids'."""
    name = id_namer(tokenizer)
    ids = batch.get("input_ids")
    if name is None or ids is None:
        return None
    leading = [f"[reg{r}]" for r in range(registers)]
    if ids.dim() == 3:  # byte patches (B, N, P): a token is its bytes, the padding inside it left out
        return [
            leading + ["".join(name(i) for i in patch if i != BYTE_PAD) or "<pad>" for patch in row]
            for row in ids.tolist()
        ]
    return [leading + [name(int(i)) for i in row] for row in ids.tolist()]
