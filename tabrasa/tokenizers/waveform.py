"""The example forms every waveform tokenizer of a pretrained family accepts, read in one place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from tabrasa.tokenizers.audio_features import WaveformInput
from tabrasa.tokenizers.base import Batch

Encode = Callable[[WaveformInput, int], Batch]


def encode_example(encode: Encode, example: WaveformInput | Mapping[str, Any], sample_rate: int) -> Batch:
    """A waveform at `sample_rate`, or a mapping with `audio` (or a datasets Audio dict), its rate and an
    optional `label` → `encode(wave, rate)` plus the label."""
    if not isinstance(example, Mapping):
        return encode(example, sample_rate)
    if isinstance(example.get("audio"), Mapping):  # Hugging Face datasets: {"audio": {"array", ...}}
        inner = {**example["audio"], **{k: v for k, v in example.items() if k != "audio"}}
        return encode_example(encode, inner, sample_rate)
    wave = example.get("audio", example.get("array"))
    if wave is None:
        raise KeyError(f"audio example has keys {sorted(example)}; put the waveform under audio or array")
    out = encode(wave, int(example.get("sample_rate", example.get("sampling_rate", sample_rate))))
    if "label" in example:
        out["label"] = torch.as_tensor(example["label"])
    return out
