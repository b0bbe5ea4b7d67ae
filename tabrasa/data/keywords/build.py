"""Generate the spoken-keywords dataset once from its settings and cache it as Arrow.

Layout of one cache entry, `<cache>/keywords/<hash of the settings>/`:
  clips/{train,validation,test}  one row per (speaker, word): the trimmed word (int16), where it starts in
                                 the 1-second clip, and for validation and test the fixed noise (int16),
                                 SNR and gain of their one deterministic noisy rendition
  noise/{train,validation,test}  each split's background-noise bank (unit-RMS float32 clips with kinds);
                                 babble is phrases by that split's own speakers, so no voice leaks
  meta.json                      the settings, engine versions, row counts and generation time
Any change of a setting changes the hash, so a new entry is generated; an existing one is read as is.
"""

from __future__ import annotations

import json
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
from tabrasa.data.keywords.planning import Plan, plan
from tabrasa.data.keywords.speakers import SPLITS
from tabrasa.data.keywords.synthesis import Job, speak_all
from tabrasa.data.keywords.words import WORDS, select_words
from tabrasa.io import atomic_write

FORMAT_VERSION = 3  # bump when the generation code changes what a setting produces
MAX_WORD_FRACTION = 0.95  # longest word, as a fraction of the clip (leaves room to shift it)


@dataclass(frozen=True)
class KeywordsSettings:
    """Everything the generated data depends on; its hash names the cache entry.

    speakers: size of the speaker table (flite_fraction of them flite voices), split by whole voices.
    limit: generate only the first `limit` (speaker, word) pairs of each split's seeded order.
    noise_clips / noise_seconds: size of each split's background-noise bank; babble_utterances: phrases
    spoken by each split's speakers to make its babble.
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
    babble_utterances: int = 96
    clip_seconds: float = 1.0
    sample_rate: int = 16000
    limit: int | None = None
    version: int = field(default=FORMAT_VERSION)

    def __post_init__(self) -> None:
        select_words(self.words)
        unknown = set(self.noise_kinds) - set(NOISE_KINDS)
        if unknown or not self.noise_kinds:
            raise ValueError(f"noise_kinds={self.noise_kinds}: choose one or more of {NOISE_KINDS}")
        if self.noise_clips < 1 or self.noise_seconds < self.clip_seconds or self.babble_utterances < 1:
            raise ValueError(
                f"noise_clips={self.noise_clips} and babble_utterances={self.babble_utterances} must be "
                f">= 1 and noise_seconds={self.noise_seconds} at least clip_seconds={self.clip_seconds}"
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


def plan_for(settings: KeywordsSettings) -> Plan:
    s = settings
    return plan(
        s.words,
        s.speakers,
        s.seed,
        s.flite_fraction,
        s.val_fraction,
        s.test_fraction,
        s.babble_utterances,
        s.limit,
    )


def load_or_build(settings: KeywordsSettings, root: Path, processes: int = 2) -> Path:
    """The cache entry for `settings` under `root`, generated first if it does not exist yet."""
    path = root / settings.key
    if (path / "meta.json").exists():
        return path
    started = time.perf_counter()
    todo = plan_for(settings)
    jobs = todo.words
    rank_zero_info(f"[keywords] generating {sum(map(len, jobs.values())):,} clips into {path}")
    max_samples = int(MAX_WORD_FRACTION * settings.samples)
    words = _speak_splits(jobs, settings.sample_rate, max_samples, processes, "keywords: speaking words")
    phrases = _speak_splits(todo.babble, settings.sample_rate, None, processes, "keywords: speaking babble")
    clips, noise = {}, {}
    for split_id, split in enumerate(SPLITS):
        bank = _noise_bank(settings, split_id, [from_int16(p) for p in phrases[split]])
        noise[split] = _noise_rows(bank, settings)
        clips[split] = _clip_rows(settings, split_id, jobs[split], words[split], bank)
    meta = _meta(settings, jobs, time.perf_counter() - started)

    def write(tmp: Path) -> None:  # a concurrent builder that finished first wins (atomic_write keeps it)
        datasets.DatasetDict(clips).save_to_disk(str(tmp / "clips"))
        datasets.DatasetDict(noise).save_to_disk(str(tmp / "noise"))
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2))

    atomic_write(path, write)
    rank_zero_info(f"[keywords] generated in {meta['seconds']:.0f} s: {meta['rows']}")
    return path


def _speak_splits(
    jobs: dict[str, list[Job]], sample_rate: int, max_samples: int | None, processes: int, desc: str
) -> dict[str, list[np.ndarray]]:
    """Every split's jobs in one parallel pass → split → int16 waveforms at the speech level."""
    flat = [job for split in SPLITS for job in jobs[split]]
    waves = iter(speak_all(flat, sample_rate, max_samples, processes, desc=desc))
    return {split: [_to_int16(_speech_level(next(waves))) for _ in jobs[split]] for split in SPLITS}


def _speech_level(wave: np.ndarray) -> np.ndarray:
    """Scale the word to SPEECH_RMS_DB, or lower if its peak would clip in int16."""
    level = unit_rms(wave) * np.float32(10 ** (SPEECH_RMS_DB / 20))
    return level / max(1.0, float(np.abs(level).max()) / 0.99)


def _to_int16(wave: np.ndarray) -> np.ndarray:
    return np.round(np.clip(wave, -1.0, 1.0) * 32767).astype(np.int16)


def from_int16(wave: np.ndarray) -> np.ndarray:
    return np.asarray(wave, dtype=np.float32) / np.float32(32767)


def _noise_bank(settings: KeywordsSettings, split_id: int, phrases: list[np.ndarray]) -> np.ndarray:
    """noise_clips unit-RMS clips cycling through the noise kinds → (K, M) float32."""
    samples = round(settings.noise_seconds * settings.sample_rate)
    bank = []
    for k in range(settings.noise_clips):
        kind = _kind(settings, k)
        rng = np.random.default_rng([settings.seed, 5, split_id, k])
        if kind == "babble":
            bank.append(babble(phrases, samples, settings.sample_rate, rng))
        else:
            bank.append(coloured_noise(kind, samples, settings.sample_rate, rng))
    return np.stack(bank)


def _kind(settings: KeywordsSettings, index: int) -> str:
    return settings.noise_kinds[index % len(settings.noise_kinds)]


def _noise_rows(bank: np.ndarray, settings: KeywordsSettings) -> datasets.Dataset:
    features = datasets.Features(
        {"noise": datasets.Sequence(datasets.Value("float32")), "kind": datasets.Value("string")}
    )
    kinds = [_kind(settings, k) for k in range(len(bank))]
    return datasets.Dataset.from_dict({"noise": list(bank), "kind": kinds}, features=features)


def _clip_rows(
    settings: KeywordsSettings, split_id: int, jobs: list[Job], words: list[np.ndarray], bank: np.ndarray
) -> datasets.Dataset:
    """Rows of one split; validation and test rows get their one fixed noisy rendition here."""
    mixer, fixed = settings.mixer(), SPLITS[split_id] != "train"
    columns = ("utterance", "onset", "noise", "snr_db", "gain_db", "noise_kind")
    rows: dict[str, list[Any]] = {c: [] for c in columns}
    for index, word in enumerate(words):
        if not fixed:  # training rows are mixed afresh every time they are read
            row = (word, (settings.samples - len(word)) // 2, np.zeros(0, np.int16), None, None, None)
        else:
            mix = mixer.draw(
                from_int16(word), bank, np.random.default_rng([settings.seed, 6, split_id, index])
            )
            noise = _to_int16(mix.noise)
            measured = snr_db(mix.speech, from_int16(noise), mix.onset, len(word))  # what is stored
            row = (word, mix.onset, noise, measured, mix.gain_db, _kind(settings, mix.noise_index))
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
