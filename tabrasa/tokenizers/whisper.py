"""Whisper's audio input side (Radford et al. 2022), exactly as its encoder weights expect it.

Tokenizer: a 16 kHz waveform, zero-padded (or cut) to 30 s, → 80-bin log-mel: STFT with a 400-sample Hann
window every 160 samples (25 ms / 10 ms), |·|², Slaney mel filters, log10 clamped at 1e-10, floored at the
example's maximum − 8 (an 80 dB range), then (x + 4) / 4. This is `whisper.audio.log_mel_spectrogram` and
transformers' WhisperFeatureExtractor; 30 s give 3,000 frames.

Embedder: the convolutional stem, two Conv1d of kernel 3 with exact GELU, the second of stride 2 (3,000
frames → 1,500 tokens), plus Whisper's fixed sinusoidal table (sines then cosines, not interleaved as in
Vaswani et al., hence here and not in the backbone). Whisper never masks: the padded silence is attended to,
and the weights expect it, so every token is real.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torchaudio.functional
from torch import nn

from tabrasa.tokenizers.audio_features import WaveformInput, as_mono
from tabrasa.tokenizers.base import Batch, Embedder, Tokenizer, Tokens, collate_labels
from tabrasa.tokenizers.specs import Spec, register_embedder, register_tokenizer
from tabrasa.tokenizers.truncation import TruncationPolicy, truncate
from tabrasa.tokenizers.waveform import encode_example

SAMPLE_RATE, N_FFT, HOP = 16000, 400, 160
CHUNK_SECONDS = 30.0  # Whisper's context: every input is padded to it, and its encoder has 1,500 positions


def sinusoids(length: int, channels: int, max_timescale: float = 10000.0) -> torch.Tensor:
    """Whisper's position table (length, channels): sin of every timescale, then cos of every timescale."""
    increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-increment * torch.arange(channels // 2, dtype=torch.float32))
    scaled = torch.arange(length, dtype=torch.float32)[:, None] * inv_timescales[None, :]
    return torch.cat([scaled.sin(), scaled.cos()], dim=1)


def log_mel(wave: torch.Tensor, filters: torch.Tensor) -> torch.Tensor:
    """(T,) waveform → (T // HOP, n_mels) Whisper log-mel; `filters` is (N_FFT // 2 + 1, n_mels)."""
    stft = torch.stft(wave, N_FFT, HOP, window=torch.hann_window(N_FFT), return_complex=True)
    power = stft[..., :-1].abs() ** 2  # (freqs, frames): the last frame is dropped, as Whisper does
    mel = (filters.T @ power).clamp(min=1e-10).log10()  # (n_mels, frames)
    mel = torch.maximum(mel, mel.max() - 8.0)
    return ((mel + 4.0) / 4.0).T.contiguous()


class WhisperTokenizer(Tokenizer):
    """Waveform → `features` (frames, n_mels), Whisper's log-mel of the clip padded to `seconds`.

    seconds: 30 reproduces Whisper; a shorter window (e.g. 2 s for one-second keywords) costs 15× less
        compute but shows the encoder inputs shorter than it was trained on. Longer clips are cut by
        `truncation` and counted in `truncated`.
    """

    def __init__(
        self,
        n_mels: int = 80,
        seconds: float = CHUNK_SECONDS,
        sample_rate: int = SAMPLE_RATE,
        truncation: TruncationPolicy = "head",
    ) -> None:
        samples = round(seconds * SAMPLE_RATE)
        if samples % (2 * HOP) or not 0 < seconds <= CHUNK_SECONDS:
            raise ValueError(
                f"seconds={seconds} must be in (0, 30] and a multiple of 0.02 (two 10 ms frames per token)"
            )
        self.n_mels, self.seconds, self.sample_rate, self.truncation = (
            n_mels,
            seconds,
            sample_rate,
            truncation,
        )
        self.samples = samples
        self.filters = torchaudio.functional.melscale_fbanks(
            N_FFT // 2 + 1, 0.0, SAMPLE_RATE / 2, n_mels, SAMPLE_RATE, norm="slaney", mel_scale="slaney"
        )  # (201, n_mels), librosa's filters, which Whisper ships

    @property
    def frames(self) -> int:
        return self.samples // HOP

    def encode(self, wave: WaveformInput, sample_rate: int, source: str = "audio") -> Batch:
        mono = as_mono(wave, source)
        if sample_rate != SAMPLE_RATE:
            mono = torchaudio.functional.resample(mono, sample_rate, SAMPLE_RATE)
        kept, removed = truncate(list(range(len(mono))), self.samples, self.truncation, 0, 0, source)
        mono = nn.functional.pad(mono[kept], (0, self.samples - len(kept)))
        return {"features": log_mel(mono, self.filters), "truncated": torch.tensor(removed)}

    def __call__(self, example: WaveformInput | Mapping[str, Any]) -> Batch:
        """A waveform at `sample_rate`, or a mapping with `audio` (or a datasets Audio dict) and `label`."""
        return encode_example(self.encode, example, self.sample_rate)

    def collate(self, examples: Sequence[Batch]) -> Batch:
        if not examples:
            raise ValueError("cannot collate an empty list of examples")
        features = torch.stack([e["features"] for e in examples])  # (B, frames, n_mels), all one length
        mask = torch.ones(features.shape[:2], dtype=torch.bool)
        return collate_labels(examples, {"features": features, "frame_mask": mask})

    def embedder(self, dim: int) -> WhisperEmbedder:
        return WhisperEmbedder(dim, self.n_mels)

    def to_spec(self) -> WhisperTokenizerSpec:
        return WhisperTokenizerSpec(self.n_mels, self.seconds, self.sample_rate)

    @classmethod
    def from_spec(cls, spec: WhisperTokenizerSpec, folder: Path | None = None) -> WhisperTokenizer:
        return cls(spec.n_mels, spec.seconds, spec.sample_rate)


@dataclass(frozen=True)
class WhisperTokenizerSpec(Spec):
    kind = "whisper"
    n_mels: int = 80
    seconds: float = CHUNK_SECONDS
    sample_rate: int = SAMPLE_RATE


class WhisperEmbedder(Embedder):
    """features (B, frames, n_mels) → (B, frames / 2, D): conv stem + Whisper's sinusoidal positions.

    `positions` is a buffer in the state dict (checkpoints store the table) that is never trained, as in
    Whisper; inputs shorter than 30 s use its first rows.
    """

    def __init__(self, dim: int, n_mels: int = 80, max_tokens: int = 1500) -> None:
        super().__init__()
        self.dim, self.n_mels = dim, n_mels
        self.conv1 = nn.Conv1d(n_mels, dim, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, kernel_size=3, stride=2, padding=1)
        self.act = nn.GELU()  # exact erf GELU, as Whisper
        self.register_buffer("positions", sinusoids(max_tokens, dim))

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        features = batch["features"]
        _, T, F = features.shape
        tokens = (T + 1) // 2
        if self.n_mels != F or tokens > self.positions.shape[0]:
            raise ValueError(
                f"features have shape {tuple(features.shape)} but the Whisper embedder takes {self.n_mels} "
                f"mel bins and at most {2 * self.positions.shape[0]} frames; use WhisperTokenizer"
            )
        x = self.act(self.conv1(features.transpose(1, 2)))  # (B, D, T)
        x = self.act(self.conv2(x)).transpose(1, 2)  # (B, T/2, D)
        x = x + self.positions[:tokens].to(x.dtype)
        mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
        return Tokens(x, mask)

    def to_spec(self) -> WhisperEmbedderSpec:
        return WhisperEmbedderSpec(self.n_mels, self.positions.shape[0])

    @classmethod
    def from_spec(cls, spec: WhisperEmbedderSpec, dim: int) -> WhisperEmbedder:
        return cls(dim, spec.n_mels, spec.max_tokens)


@dataclass(frozen=True)
class WhisperEmbedderSpec(Spec):
    kind = "whisper"
    n_mels: int = 80
    max_tokens: int = 1500


register_tokenizer(WhisperTokenizer, WhisperTokenizerSpec)
register_embedder(WhisperEmbedder, WhisperEmbedderSpec)
