"""Generate the spoken-keywords dataset once from its settings and cache it as Arrow.

Layout of one cache entry, `<cache>/keywords/<hash of the settings>/`:
  clips/{train,validation,test}  one row per (speaker, word): the trimmed word (int16), where it starts in
                                 the 1-second clip, and for validation and test the fixed noise (int16),
                                 SNR and gain of their one deterministic noisy rendition
  noise/{train,validation,test}  each split's background-noise bank (unit-RMS float32 clips with kinds);
                                 babble is made only of that split's own words, so no voice leaks
  meta.json                      the settings, engine versions, row counts and generation time
Any change of a setting changes the hash, so a new entry is generated; an existing one is read as is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
from pytorch_lightning.utilities import rank_zero_info

from tabrasa.data.cache import settings_key
from tabrasa.data.keywords.noise import (
    NOISE_KINDS,
    SPEECH_RMS_DB,
    Mixer,
    babble,
    coloured_noise,
    snr_db,
    unit_rms,
)
from tabrasa.data.keywords.speakers import SPLITS, speaker_table, split_speakers
from tabrasa.data.keywords.synthesis import Job, speak_all
from tabrasa.data.keywords.words import WORDS, select_words

FORMAT_VERSION = 2  # bump when the generation code changes what a setting produces
MAX_WORD_FRACTION = 0.95  # longest word, as a fraction of the clip (leaves room to shift it)


@dataclass(frozen=True)
class KeywordsSettings:
    """Everything the generated data depends on; its hash names the cache entry.

    speakers: size of the speaker table (flite_fraction of them flite voices), split by whole voices.
    limit: generate only the first `limit` (speaker, word) pairs of each split's seeded order.
    noise_clips / noise_seconds: size of each split's background-noise bank.
    """

    words: tuple[str, ...] = WORDS
    speakers: int = 300
    seed: int = 0
    flite_fraction: float = 0.1
    val_fraction: float = 0.1
    test_fraction: float = 0.15
    snr_db: tuple[float, float] = (5.0, 20.0)
    gain_db: tuple[float, float] = (-12.0, 6.0)
    noise_kinds: tuple[str, ...] = NOISE_KINDS
    noise_clips: int = 64
    noise_seconds: float = 3.0
    clip_seconds: float = 1.0
    sample_rate: int = 16000
    limit: int | None = None
    version: int = field(default=FORMAT_VERSION)

    def __post_init__(self) -> None:
        select_words(self.words)
        unknown = set(self.noise_kinds) - set(NOISE_KINDS)
        if unknown or not self.noise_kinds:
            raise ValueError(f"noise_kinds={self.noise_kinds}: choose one or more of {NOISE_KINDS}")
        if self.noise_clips < 1 or self.noise_seconds < self.clip_seconds:
            raise ValueError(
                f"noise_clips={self.noise_clips} must be >= 1 and noise_seconds={self.noise_seconds} "
                f"at least clip_seconds={self.clip_seconds}"
            )
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit={self.limit} must be >= 1 or None")
        Mixer(self.samples, self.snr_db, self.gain_db)  # validates the ranges

    @property
    def samples(self) -> int:
        return round(self.clip_seconds * self.sample_rate)

    @property
    def key(self) -> str:
        return settings_key(asdict(self))

    def mixer(self) -> Mixer:
        return Mixer(self.samples, self.snr_db, self.gain_db)


def plan(settings: KeywordsSettings) -> dict[str, list[Job]]:
    """Each split's (speaker, word) pairs in a seeded order; `limit` keeps a prefix of that order."""
    table = speaker_table(settings.speakers, settings.seed, settings.flite_fraction)
    by_split = split_speakers(table, settings.seed, settings.val_fraction, settings.test_fraction)
    jobs = {}
    for split_id, split in enumerate(SPLITS):
        pairs = [(speaker, word) for speaker in by_split[split] for word in settings.words]
        if not pairs:
            raise ValueError(f"speakers={settings.speakers} leaves no voice for {split}; use more speakers")
        order = np.random.default_rng([settings.seed, 4, split_id]).permutation(len(pairs))
        jobs[split] = [pairs[i] for i in order[: settings.limit]]
    return jobs


def load_or_build(settings: KeywordsSettings, root: Path, processes: int = 2) -> Path:
    """The cache entry for `settings` under `root`, generated first if it does not exist yet."""
    path = root / settings.key
    if (path / "meta.json").exists():
        return path
    started = time.perf_counter()
    jobs = plan(settings)
    rank_zero_info(f"[keywords] generating {sum(map(len, jobs.values())):,} clips into {path}")
    flat = [job for split in SPLITS for job in jobs[split]]
    max_samples = int(MAX_WORD_FRACTION * settings.samples)
    waves = iter(speak_all(flat, settings.sample_rate, max_samples, processes, desc="keywords: speaking"))
    clips, noise = {}, {}
    for split_id, split in enumerate(SPLITS):
        words = [_to_int16(_speech_level(next(waves))) for _ in jobs[split]]
        bank, sources = _noise_bank(settings, split_id, words)
        noise[split] = _noise_rows(bank, sources, settings)
        clips[split] = _clip_rows(settings, split_id, jobs[split], words, bank, sources)
    tmp = root / f".{settings.key}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    datasets.DatasetDict(clips).save_to_disk(str(tmp / "clips"))
    datasets.DatasetDict(noise).save_to_disk(str(tmp / "noise"))
    meta = _meta(settings, jobs, time.perf_counter() - started)
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
    _publish(tmp, path)
    rank_zero_info(f"[keywords] generated in {meta['seconds']:.0f} s: {meta['rows']}")
    return path


def _speech_level(wave: np.ndarray) -> np.ndarray:
    """Scale the word to SPEECH_RMS_DB, or lower if its peak would clip in int16."""
    level = unit_rms(wave) * np.float32(10 ** (SPEECH_RMS_DB / 20))
    return level / max(1.0, float(np.abs(level).max()) / 0.99)


def _to_int16(wave: np.ndarray) -> np.ndarray:
    return np.round(np.clip(wave, -1.0, 1.0) * 32767).astype(np.int16)


def from_int16(wave: np.ndarray) -> np.ndarray:
    return np.asarray(wave, dtype=np.float32) / np.float32(32767)


def _noise_bank(
    settings: KeywordsSettings, split_id: int, words: list[np.ndarray]
) -> tuple[np.ndarray, list[list[int]]]:
    """noise_clips unit-RMS clips cycling through the noise kinds → (K, M) float32, babble sources."""
    samples = round(settings.noise_seconds * settings.sample_rate)
    utterances = [from_int16(w) for w in words]
    bank, sources = [], []
    for k in range(settings.noise_clips):
        kind = settings.noise_kinds[k % len(settings.noise_kinds)]
        rng = np.random.default_rng([settings.seed, 5, split_id, k])
        if kind == "babble":
            clip, used = babble(utterances, samples, settings.sample_rate, rng)
        else:
            clip, used = coloured_noise(kind, samples, settings.sample_rate, rng), []
        bank.append(clip)
        sources.append(used)
    return np.stack(bank), sources


def _noise_rows(bank: np.ndarray, sources: list[list[int]], settings: KeywordsSettings) -> datasets.Dataset:
    kinds = [settings.noise_kinds[k % len(settings.noise_kinds)] for k in range(len(bank))]
    features = datasets.Features(
        {"noise": datasets.Sequence(datasets.Value("float32")), "kind": datasets.Value("string"),
         "sources": datasets.Sequence(datasets.Value("int32"))}
    )  # fmt: skip
    rows = {"noise": list(bank), "kind": kinds, "sources": sources}
    return datasets.Dataset.from_dict(rows, features=features)


def _clip_rows(
    settings: KeywordsSettings,
    split_id: int,
    jobs: list[Job],
    words: list[np.ndarray],
    bank: np.ndarray,
    sources: list[list[int]],
) -> datasets.Dataset:
    """Rows of one split. Validation and test rows get their one fixed noisy rendition here; a babble
    clip that contains the row's own word is never its background."""
    mixer, fixed = settings.mixer(), SPLITS[split_id] != "train"
    kinds = [settings.noise_kinds[k % len(settings.noise_kinds)] for k in range(len(bank))]
    columns = ("utterance", "onset", "noise", "snr_db", "gain_db", "noise_kind")
    rows: dict[str, list[Any]] = {c: [] for c in columns}
    for index, word in enumerate(words):
        if not fixed:  # training rows are mixed afresh every time they are read
            row = (word, (settings.samples - len(word)) // 2, np.zeros(0, np.int16), None, None, None)
        else:
            rng = np.random.default_rng([settings.seed, 6, split_id, index])
            choices = [k for k in range(len(bank)) if index not in sources[k]]
            mix = mixer.draw(from_int16(word), bank, rng, choices)
            noise = _to_int16(mix.noise)
            measured = snr_db(mix.speech, from_int16(noise), mix.onset, len(word))  # what is stored
            row = (word, mix.onset, noise, measured, mix.gain_db, kinds[mix.noise_index])
        for column, value in zip(columns, row, strict=True):
            rows[column].append(value)
    labels = [settings.words.index(word) for _, word in jobs]
    return datasets.Dataset.from_dict(
        {**rows, "label": labels, "speaker": [s.name for s, _ in jobs], "voice": [s.group for s, _ in jobs]},
        features=clip_features(settings.words),
    )


def clip_features(words: tuple[str, ...]) -> datasets.Features:
    int16s = datasets.Sequence(datasets.Value("int16"))
    return datasets.Features(
        {
            "utterance": int16s,  # the trimmed word at 16 kHz, int16 PCM
            "onset": datasets.Value("int32"),  # where the word starts in the clip, in samples
            "noise": int16s,  # validation/test: the fixed background, scaled; train: empty
            "snr_db": datasets.Value("float32"),  # validation/test: SNR over the word; train: None
            "gain_db": datasets.Value("float32"),
            "noise_kind": datasets.Value("string"),
            "label": datasets.ClassLabel(names=list(words)),
            "speaker": datasets.Value("string"),
            "voice": datasets.Value("string"),  # the held-out unit: espeak-ng variant or flite voice
        }
    )


def _meta(settings: KeywordsSettings, jobs: dict[str, list[Job]], seconds: float) -> dict[str, Any]:
    return {
        "settings": asdict(settings),
        "engines": {engine: _version([engine, "--version"]) for engine in ("espeak-ng", "flite")},
        "rows": {split: len(jobs[split]) for split in SPLITS},
        "speakers": {split: len({s.name for s, _ in jobs[split]}) for split in SPLITS},
        "voices": {split: sorted({s.group for s, _ in jobs[split]}) for split in SPLITS},
        "seconds": round(seconds, 1),
    }


def _version(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()[:200]
    except FileNotFoundError:
        return "not installed"


def _publish(tmp: Path, path: Path) -> None:
    """Move a finished entry into place; a concurrent builder that finished first wins."""
    try:
        os.replace(tmp, path)
    except OSError:
        if not (path / "meta.json").exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
