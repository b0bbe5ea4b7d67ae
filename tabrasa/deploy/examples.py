"""Small synthetic raw inputs of each modality, to trace an export with and to find its dynamic axes.

Examples of different lengths, so a batch of them is padded and the traced graph takes the masked path;
`seed` varies the lengths, so a parity check runs at other shapes than the traced ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import PIL.Image

from tabrasa.deploy.modality import Modality
from tabrasa.tokenizers.base import Tokenizer

TEXTS = (
    "a short review",
    "a somewhat longer review that says the film was good and the acting was fine",
    "bad",
)
PROTEINS = ("MKTAYIAKQRQISFVKSHFSRQ", "MKVLAAGIVG", "MSTNPKPQRKTKRNTNRRPQDVKFPGG")


def example_raws(tokenizer: Tokenizer, modality: Modality, count: int, seed: int = 0) -> list[Any]:
    rng = np.random.default_rng(seed)
    if modality == "text":
        return [(TEXTS[i % len(TEXTS)] + " ") * (1 + (i + seed) % 4) for i in range(count)]
    if modality == "protein":
        return [PROTEINS[i % len(PROTEINS)] * (1 + (i + seed) % 3) for i in range(count)]
    if modality == "image":
        size = getattr(tokenizer, "image_size", None) or tuple(4 * p for p in tokenizer.patch_size)  # type: ignore[attr-defined]
        mode = "L" if tokenizer.channels == 1 else "RGB"  # type: ignore[attr-defined]
        shape = (size[0], size[1]) if mode == "L" else (size[0], size[1], 3)
        return [PIL.Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode) for _ in range(count)]
    rate = int(tokenizer.sample_rate)  # type: ignore[attr-defined]
    # Different durations, so the frame axis is seen to vary and shorter clips are padded.
    return [
        {"audio": rng.standard_normal(rate // 4 * (1 + i % 3)).astype(np.float32) * 0.1, "sample_rate": rate}
        for i in range(count)
    ]
