"""Waveform → log-mel spectrogram: validation, downmix, resampling and the filterbank, all torchaudio's.

The frame arithmetic is torchaudio's MelSpectrogram with `center=True`: the signal is reflect-padded by half
a window at both ends, so T samples give 1 + T // hop frames (1 s at 16 kHz, hop 10 ms: 101 frames).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import torch
import torchaudio.transforms

WaveformInput = torch.Tensor | np.ndarray
LOG_FLOOR = 1e-6  # log(mel + floor): silence gives log(1e-6) ≈ -13.8 instead of -inf


def as_mono(wave: WaveformInput, source: str) -> torch.Tensor:
    """(T,) or (C, T) float waveform → (T,) float32, channels averaged (downmix by mean, as ffmpeg/sox do).

    Empty, non-finite, integer and (T, C)-looking inputs are errors naming the fix.
    """
    if not isinstance(wave, torch.Tensor | np.ndarray):
        raise TypeError(f"{source} is {type(wave).__name__}; pass a torch tensor or numpy array waveform")
    wave = torch.as_tensor(wave)
    if not wave.is_floating_point():
        raise TypeError(
            f"{source} has dtype {wave.dtype}; pass float samples in [-1, 1] (int16 PCM: divide by 32768)"
        )
    if wave.ndim not in (1, 2):
        raise ValueError(f"{source} has shape {tuple(wave.shape)}; expected (T,) mono or (C, T) multichannel")
    if wave.shape[-1] == 0:
        raise ValueError(f"{source} is empty (shape {tuple(wave.shape)}); drop it from the dataset")
    if wave.ndim == 2 and wave.shape[0] > wave.shape[1]:
        raise ValueError(
            f"{source} has shape {tuple(wave.shape)}, more channels than samples; waveforms are (C, T): "
            f"transpose it (soundfile.read returns (T, C))"
        )
    if not bool(torch.isfinite(wave).all()):
        raise ValueError(f"{source} holds NaN or infinite samples; clean or drop it")
    return (wave.mean(dim=0) if wave.ndim == 2 else wave).float()


class LogMel:
    """Mono waveform at any rate → log-mel features (frames, n_mels) at `sample_rate`.

    Windows of `win_ms` (Hann, FFT of the window length) every `hop_ms`; power spectrogram through an HTK
    mel filterbank (torchaudio's defaults), then log(mel + 1e-6). A clip shorter than one window is padded
    with trailing silence to one window (after resampling): short clips are data, not errors.
    """

    def __init__(
        self, sample_rate: int = 16000, n_mels: int = 64, win_ms: float = 25.0, hop_ms: float = 10.0
    ):
        if sample_rate < 1 or n_mels < 1 or win_ms <= 0 or hop_ms <= 0:
            raise ValueError(
                f"sample_rate={sample_rate}, n_mels={n_mels}, win_ms={win_ms} and hop_ms={hop_ms} must all "
                "be positive"
            )
        self.sample_rate = sample_rate
        self.n_mels = n_mels
        self.win_length = round(sample_rate * win_ms / 1000)
        self.hop_length = round(sample_rate * hop_ms / 1000)
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate, n_fft=self.win_length, hop_length=self.hop_length, n_mels=n_mels, center=True
        )
        # torchaudio.functional.resample rebuilds its sinc kernel on every call; the Resample transform
        # keeps it, which makes a 1 s clip at 22.05 kHz about 5x cheaper. One per input rate seen.
        self._resamplers: dict[int, torchaudio.transforms.Resample] = {}

    def num_frames(self, num_samples: int) -> int:
        """Frames that `num_samples` samples at `sample_rate` give (center=True)."""
        return 1 + num_samples // self.hop_length

    def __call__(self, wave: torch.Tensor, sample_rate: int, source: str = "audio") -> torch.Tensor:
        """(T,) mono float at `sample_rate` → (frames, n_mels) log-mel."""
        if sample_rate < 1:
            raise ValueError(f"{source} has sample rate {sample_rate}; it must be a positive number of Hz")
        if sample_rate != self.sample_rate:
            if sample_rate not in self._resamplers:
                self._resamplers[sample_rate] = torchaudio.transforms.Resample(sample_rate, self.sample_rate)
            wave = self._resamplers[sample_rate](wave)
        if wave.shape[-1] < self.win_length:
            # Short-clip policy: pad with trailing silence to one analysis window (25 ms), as audio pipelines
            # do, so a 10 ms click gives 1 + win // hop frames instead of failing the run.
            wave = torch.nn.functional.pad(wave, (0, self.win_length - wave.shape[-1]))
        return self.log_mel(wave, source).T.contiguous()  # (frames, n_mels)

    def log_mel(self, waves: torch.Tensor, source: str = "audio") -> torch.Tensor:
        """(..., T) float at `sample_rate` → (..., n_mels, frames) log-mel; any leading batch shape."""
        mel = self.mel(waves)
        if not bool(torch.isfinite(mel).all()):  # |x| beyond ~1e16: the power spectrum overflows float32
            raise ValueError(
                f"{source} peaks at {float(waves.abs().max()):.3g}, so its power spectrum overflows float32; "
                f"scale the samples into [-1, 1] (int16 PCM: divide by 32768)"
            )
        return torch.log(mel + LOG_FLOOR)


def normalizer(value: float | Sequence[float], n_mels: int, name: str) -> torch.Tensor:
    """One statistic for every mel bin, or one per bin → (n_mels,) tensor."""
    values = [float(value)] * n_mels if isinstance(value, int | float) else [float(v) for v in value]
    if len(values) != n_mels or not all(math.isfinite(v) for v in values):
        raise ValueError(f"{name} has {len(values)} values but n_mels={n_mels}; give one or one per mel bin")
    return torch.tensor(values)


def mel_statistics(log_mels: Iterable[torch.Tensor]) -> tuple[list[float], list[float]]:
    """Per-bin mean and std over every frame of (frames, n_mels) log-mels, for AudioTokenizer(mean, std)."""
    frames = torch.cat(list(log_mels), dim=0).double()  # (all frames, n_mels)
    return frames.mean(dim=0).tolist(), frames.std(dim=0).clamp_min(1e-3).tolist()
