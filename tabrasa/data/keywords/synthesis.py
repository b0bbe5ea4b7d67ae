"""Speak words with the speech engines: subprocess → WAV → soundfile → trim → resample to 16 kHz.

espeak-ng (formant synthesis, 22,050 Hz) and flite (diphone and clustergen voices, 8 or 16 kHz) are
deterministic: the same speaker and word give the same samples on every run, so a dataset generated from a
seed is reproducible. Work is spread over processes (subprocess calls dominate) with a progress bar.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence

import numpy as np
import soundfile
import torch
import torchaudio.functional
from tqdm.auto import tqdm

from tabrasa.data.keywords.speakers import Speaker
from tabrasa.data.sources import DataSourceMissingError

DEBIAN_PACKAGES = {"espeak-ng": "espeak-ng", "flite": "flite"}
SILENCE_DB = 40.0  # frames this far below the loudest frame count as silence when trimming
FRAME_MS = 10
MAX_RETRIES = 4  # a word that does not fit the clip is spoken again this many times, 15% faster each
RETRY_SPEEDUP = 1.15

Job = tuple[Speaker, str]


class EngineMissingError(DataSourceMissingError):
    """A speech engine the dataset needs is not installed."""


def require_engines(engines: Iterable[str]) -> dict[str, str]:
    """Where each engine is; EngineMissingError naming the Debian package when one is not on PATH."""
    found = {e: shutil.which(e) for e in engines}
    missing = sorted(e for e, path in found.items() if path is None)
    if missing:
        packages = " ".join(DEBIAN_PACKAGES[e] for e in missing)
        raise EngineMissingError(
            f"the spoken-keywords dataset needs the speech engine(s) {', '.join(missing)}, which are not on "
            f"PATH; install the Debian package(s): sudo apt-get install {packages}"
        )
    return {e: str(path) for e, path in found.items()}


def speak(
    speaker: Speaker, word: str, sample_rate: int = 16000, max_samples: int | None = None
) -> np.ndarray:
    """One word by one speaker → trimmed float32 waveform at `sample_rate`.

    When the trimmed word is longer than `max_samples` (a slow speaker, a long word) it is spoken again
    faster, as a person asked to fit a one-second window would; a word that never fits is an error.
    """
    rate_scale = 1.0
    for _ in range(MAX_RETRIES + 1):
        wave = _trim(_run_engine(speaker, word, rate_scale, sample_rate), sample_rate)
        if max_samples is None or len(wave) <= max_samples:
            return wave
        rate_scale *= RETRY_SPEEDUP
    raise ValueError(
        f"{speaker.name} says {word!r} in {len(wave) / sample_rate:.2f} s even {rate_scale:.2f}x faster, "
        f"longer than the {max_samples / sample_rate:.2f} s allowed; raise RATE_RANGE's minimum or lengthen "
        "the clips"
    )


def _run_engine(speaker: Speaker, word: str, rate_scale: float, sample_rate: int) -> np.ndarray:
    with tempfile.TemporaryDirectory(prefix="tabrasa-tts-") as tmp:
        path = os.path.join(tmp, "word.wav")
        command = speaker.command(word, path, rate_scale)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not os.path.exists(path):
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[:500]}")
        wave, rate = soundfile.read(path, dtype="float32", always_2d=True)  # (T, C)
    wave = torch.from_numpy(wave.mean(axis=1))
    if rate != sample_rate:
        wave = torchaudio.functional.resample(wave, rate, sample_rate)
    return wave.numpy()


def _trim(wave: np.ndarray, sample_rate: int) -> np.ndarray:
    """Cut leading and trailing silence: keep from the first to the last frame within SILENCE_DB of the
    loudest, plus one frame of margin each side (engines pad words with up to 200 ms of silence)."""
    hop = sample_rate * FRAME_MS // 1000
    frames = len(wave) // hop
    if frames == 0:
        raise ValueError(f"the engine produced {len(wave)} samples, too short to hold a word")
    power = (wave[: frames * hop].reshape(frames, hop) ** 2).mean(axis=1)  # (frames,)
    loud = np.nonzero(power > power.max() * 10 ** (-SILENCE_DB / 10))[0]
    if power.max() <= 0 or len(loud) == 0:
        raise ValueError("the engine produced silence")
    start = max(loud[0] - 1, 0) * hop
    stop = min(loud[-1] + 2, frames) * hop
    return wave[start:stop]


def speak_all(
    jobs: Sequence[Job], sample_rate: int, max_samples: int, processes: int = 2, desc: str = "speaking"
) -> list[np.ndarray]:
    """speak() every (speaker, word) job, in order, over `processes` processes, with a progress bar."""
    require_engines({speaker.engine for speaker, _ in jobs})
    args = [(speaker, word, sample_rate, max_samples) for speaker, word in jobs]
    bar = tqdm(total=len(jobs), desc=desc, unit="word")
    with bar:
        if processes <= 1 or len(jobs) < 8:  # a handful of words is quicker than starting processes
            return [_speak_and_tick(a, bar) for a in args]
        # fork: workers inherit the imported modules instead of importing torch again
        with multiprocessing.get_context("fork").Pool(processes, initializer=_one_thread) as pool:
            waves = []
            for wave in pool.imap(_speak_args, args, chunksize=16):
                waves.append(wave)
                bar.update()
            return waves


def _speak_and_tick(args: tuple[Speaker, str, int, int], bar: tqdm) -> np.ndarray:
    wave = _speak_args(args)
    bar.update()
    return wave


def _speak_args(args: tuple[Speaker, str, int, int]) -> np.ndarray:
    return speak(*args)


def _one_thread() -> None:
    torch.set_num_threads(1)  # each process resamples one word at a time; more threads only contend
