"""Background noise and the mix: coloured noise, babble, mixing at a signal-to-noise ratio, gain, shift.

Noise kinds: white; pink (power ∝ 1/f) and brown (∝ 1/f²), the coloured noises of room tone and rumble
(Speech Commands' own `_background_noise_` has white and pink); babble, several synthetic talkers chatting
at once (never saying a keyword), the hardest background for keyword spotting because it is speech.
The SNR is measured over the word's own samples, not the whole clip, so a short word is as audible as a
long one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NOISE_KINDS = ("white", "pink", "brown", "babble")
SPEECH_RMS_DB = -26.0  # speech level (dBFS over the word) before gain: leaves headroom for noise and peaks
BABBLE_TALKERS = (4, 7)  # talkers in a babble clip, inclusive (Krishnamurthy & Hansen 2009 use 1–9)
HIGHPASS_HZ = 20.0  # coloured noise is cut below this: brown noise's DC drift is inaudible but huge


def coloured_noise(kind: str, samples: int, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS white, pink or brown noise: white Gaussian noise with its spectrum shaped by f^-α/2."""
    exponent = {"white": 0.0, "pink": 1.0, "brown": 2.0}.get(kind)
    if exponent is None:
        raise ValueError(f"noise kind {kind!r} is not coloured noise; choose white, pink or brown")
    spectrum = np.fft.rfft(rng.standard_normal(samples))
    freqs = np.fft.rfftfreq(samples, d=1.0 / sample_rate)
    shape = np.where(freqs >= HIGHPASS_HZ, np.maximum(freqs, HIGHPASS_HZ) ** (-exponent / 2), 0.0)
    return unit_rms(np.fft.irfft(spectrum * shape, n=samples))


def babble(
    utterances: Sequence[np.ndarray], samples: int, sample_rate: int, rng: np.random.Generator
) -> np.ndarray:
    """Unit-RMS babble: 4–7 talkers, each a stream of random `utterances` separated by 0–150 ms pauses
    that fills the clip, at levels within ±6 dB, so there is chatter everywhere and no silent gap."""
    if not utterances:
        raise ValueError("babble needs at least one utterance to mix")
    noise = np.zeros(samples)
    for _ in range(int(rng.integers(BABBLE_TALKERS[0], BABBLE_TALKERS[1] + 1))):
        stream, length = [], 0
        while length < samples:
            index = int(rng.integers(len(utterances)))
            pause = np.zeros(int(rng.integers(0, sample_rate * 150 // 1000 + 1)), dtype=np.float32)
            stream += [unit_rms(utterances[index]), pause]
            length += len(utterances[index]) + len(pause)
        talker = np.roll(np.concatenate(stream)[:samples], int(rng.integers(samples)))
        noise += talker * 10 ** (rng.uniform(-6, 6) / 20)
    return unit_rms(noise)


def unit_rms(x: np.ndarray) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))
    if rms == 0.0:
        raise ValueError("cannot normalise a silent signal")
    return (x / rms).astype(np.float32)


def snr_db(speech: np.ndarray, noise: np.ndarray, onset: int, length: int) -> float:
    """10·log10(speech power / noise power) over the word's samples [onset, onset + length)."""
    span = slice(onset, onset + length)
    speech_power = np.mean(np.square(speech[span], dtype=np.float64))
    noise_power = np.mean(np.square(noise[span], dtype=np.float64))
    if speech_power == 0.0 or noise_power == 0.0:
        raise ValueError(f"SNR over samples [{onset}, {onset + length}) is undefined: a signal is silent")
    return float(10 * np.log10(speech_power / noise_power))


def place(utterance: np.ndarray, onset: int, samples: int) -> np.ndarray:
    """The word at `onset` in a clip of `samples` zeros (digital silence around it)."""
    if onset < 0 or onset + len(utterance) > samples:
        raise ValueError(f"a {len(utterance)}-sample word at {onset} does not fit a {samples}-sample clip")
    clip = np.zeros(samples, dtype=np.float32)
    clip[onset : onset + len(utterance)] = utterance
    return clip


@dataclass(frozen=True)
class Rendition:
    """One noisy rendition of a word: audio = 10^(gain_db/20) · (speech + noise)."""

    speech: np.ndarray  # (samples,) the word placed at `onset`
    noise: np.ndarray  # (samples,) a noise window scaled to the drawn SNR over the word
    onset: int
    noise_index: int  # row of the noise bank the window came from
    gain_db: float

    @property
    def audio(self) -> np.ndarray:
        return (self.speech + self.noise) * np.float32(10 ** (self.gain_db / 20))


@dataclass(frozen=True)
class Mixer:
    """Draws one noisy rendition of a word: time shift (onset), a noise window, an SNR and a gain.

    snr_db / gain_db: uniform ranges in dB. Used with a seeded generator to fix the validation and test
    mixes once, and with a fresh generator per example to augment training.
    """

    samples: int
    snr_db: tuple[float, float] = (5.0, 20.0)
    gain_db: tuple[float, float] = (-12.0, 6.0)

    def __post_init__(self) -> None:
        for name in ("snr_db", "gain_db"):
            low, high = getattr(self, name)
            if low > high:
                raise ValueError(f"{name}={(low, high)} must be a (low, high) range with low <= high")

    def draw(self, utterance: np.ndarray, noise_bank: np.ndarray, rng: np.random.Generator) -> Rendition:
        """utterance (L,) and noise_bank (K, M >= samples), unit-RMS rows → a Rendition."""
        onset = int(rng.integers(self.samples - len(utterance) + 1))
        speech = place(utterance, onset, self.samples)
        index = int(rng.integers(len(noise_bank)))
        start = int(rng.integers(noise_bank.shape[1] - self.samples + 1))
        noise = noise_bank[index, start : start + self.samples]
        target = float(rng.uniform(*self.snr_db))
        scale = 10 ** ((snr_db(speech, noise, onset, len(utterance)) - target) / 20)
        return Rendition(speech, noise * np.float32(scale), onset, index, float(rng.uniform(*self.gain_db)))
