"""A deterministic table of synthetic speakers and a split of them into train / validation / test.

A speaker is one engine voice with its own speaking rate and pitch: espeak-ng's English accents × its voice
variants (formant settings that change the timbre: `m3`, `f2`, `klatt4`, `whisper`, `croak` …), and flite's
five voices. Splits hold out whole *voices*, not just speakers (a held-out variant or flite voice is never
heard in training under any accent, rate or pitch), the way speech benchmarks hold out people.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Engine = Literal["espeak-ng", "flite"]
SPLITS = ("train", "validation", "test")

ESPEAK_ACCENTS = (
    "en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-us-nyc",
    "en-029",
)  # fmt: skip
# The voice variants espeak-ng 1.51 ships (espeak-ng-data/voices/!v), minus `fast`, a speed-tuning test
# file. Listed here rather than read from disk so the speaker table is the same on every machine.
ESPEAK_VARIANTS = (
    "Alex", "Alicia", "Andrea", "Andy", "Annie", "AnxiousAndy", "Demonic", "Denis", "Diogo", "Gene",
    "Gene2", "Henrique", "Hugo", "Jacky", "Lee", "Marco", "Mario", "Michael", "Mike", "Mr serious",
    "Nguyen", "RicishayMax", "RicishayMax2", "RicishayMax3", "Storm", "Tweaky", "UniRobot", "adam", "anika",
    "anikaRobot", "announcer", "antonio", "aunty", "belinda", "benjamin", "boris", "caleb", "croak",
    "david", "ed", "edward", "edward2", "f1", "f2", "f3", "f4", "f5", "grandma", "grandpa", "gustave",
    "iven", "iven2", "iven3", "iven4", "john", "kaukovalta", "klatt", "klatt2", "klatt3", "klatt4",
    "klatt5", "klatt6", "linda", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "marcelo", "max", "michel",
    "miguel", "norbert", "pablo", "paul", "pedro", "quincy", "rob", "robert", "robosoft", "robosoft2",
    "robosoft3", "robosoft4", "robosoft5", "robosoft6", "robosoft7", "robosoft8", "sandro", "shelby",
    "steph", "steph2", "steph3", "travis", "victor", "whisper", "whisperf", "zac",
)  # fmt: skip
# flite 2.2's English voices (`awb_time` only speaks clock times). kal and kal16 are one person recorded
# at 8 and 16 kHz, so they are one voice for splitting. Mean f0 ranges (Hz) keep each voice plausible.
FLITE_VOICES = {"kal": (85.0, 140.0), "kal16": (85.0, 140.0), "awb": (90.0, 150.0), "rms": (80.0, 135.0),
                "slt": (150.0, 240.0)}  # fmt: skip
ESPEAK_DEFAULT_WPM = 175
RATE_RANGE = (0.8, 1.3)  # speaking rate relative to the engine's default
ESPEAK_PITCH_RANGE = (15, 85)  # espeak-ng -p, 0..99 (50 = the variant's own pitch)


@dataclass(frozen=True)
class Speaker:
    """engine + voice (espeak accent or flite voice) + variant (espeak only) + rate + pitch.

    rate: 1.0 is the engine's default speed (espeak 175 words/min; flite duration_stretch 1).
    pitch: espeak-ng's -p (0..99), or flite's mean f0 in Hz.
    """

    engine: Engine
    voice: str
    variant: str
    rate: float
    pitch: float

    @property
    def group(self) -> str:
        """The voice identity that a split holds out as a whole."""
        if self.engine == "espeak-ng":
            return f"espeak-ng:{self.variant}"
        return f"flite:{'kal' if self.voice == 'kal16' else self.voice}"

    @property
    def name(self) -> str:
        voice = f"{self.voice}+{self.variant}" if self.variant else self.voice
        return f"{self.engine}:{voice}:rate={self.rate:.2f}:pitch={self.pitch:g}"

    def command(self, text: str, out_path: str, rate_scale: float = 1.0) -> list[str]:
        """The engine's command line that speaks `text` into the WAV file `out_path`."""
        rate = self.rate * rate_scale
        if self.engine == "espeak-ng":
            voice = f"{self.voice}+{self.variant}"
            speed = str(round(ESPEAK_DEFAULT_WPM * rate))
            return ["espeak-ng", "-v", voice, "-s", speed, "-p", f"{self.pitch:g}", "-w", out_path, text]
        stretch = f"duration_stretch={1.0 / rate:.4f}"
        f0 = f"int_f0_target_mean={self.pitch:g}"
        return ["flite", "-voice", self.voice, "--setf", stretch, "--setf", f0, "-t", text, "-o", out_path]


def speaker_table(count: int, seed: int, flite_fraction: float = 0.1) -> list[Speaker]:
    """`count` distinct speakers, `flite_fraction` of them flite's. Speaker i depends only on (seed, i):
    a larger table extends a smaller one."""
    if count < 3:
        raise ValueError(f"speakers={count}: need at least 3 (one voice each for train, validation and test)")
    if not 0.0 <= flite_fraction < 1.0:
        raise ValueError(f"flite_fraction={flite_fraction} must be in [0, 1)")
    n_flite = round(count * flite_fraction)
    variants = np.random.default_rng([seed, 0]).permutation(len(ESPEAK_VARIANTS))
    espeak = [
        _espeak_speaker(seed, i, ESPEAK_VARIANTS[variants[i % len(variants)]]) for i in range(count - n_flite)
    ]
    return espeak + [_flite_speaker(seed, i) for i in range(n_flite)]


def _espeak_speaker(seed: int, index: int, variant: str) -> Speaker:
    rng = np.random.default_rng([seed, 1, index])
    accent = ESPEAK_ACCENTS[int(rng.integers(len(ESPEAK_ACCENTS)))]
    rate = round(float(rng.uniform(*RATE_RANGE)), 2)
    pitch = int(rng.integers(ESPEAK_PITCH_RANGE[0], ESPEAK_PITCH_RANGE[1] + 1))
    return Speaker("espeak-ng", accent, variant, rate, pitch)


def _flite_speaker(seed: int, index: int) -> Speaker:
    rng = np.random.default_rng([seed, 2, index])
    voice = list(FLITE_VOICES)[index % len(FLITE_VOICES)]
    rate = round(float(rng.uniform(*RATE_RANGE)), 2)
    pitch = round(float(rng.uniform(*FLITE_VOICES[voice])))
    return Speaker("flite", voice, "", rate, pitch)


def split_speakers(
    speakers: Sequence[Speaker], seed: int, val_fraction: float = 0.1, test_fraction: float = 0.15
) -> dict[str, list[Speaker]]:
    """Assign whole voices (`Speaker.group`) to splits, each engine on its own so that test (and, for an
    engine with five or more voices, validation) hears every engine.
    """
    if val_fraction <= 0 or test_fraction <= 0 or val_fraction + test_fraction >= 1:
        raise ValueError(
            f"val_fraction={val_fraction}, test_fraction={test_fraction}: both must be > 0 and sum to < 1"
        )
    split_of: dict[str, str] = {}
    for engine_id, engine in enumerate(("espeak-ng", "flite")):
        groups = sorted({s.group for s in speakers if s.engine == engine})
        if not groups:
            continue
        order = np.random.default_rng([seed, 3, engine_id]).permutation(len(groups))
        n_test, n_val = _held_out_counts(len(groups), val_fraction, test_fraction)
        for rank, g in enumerate(order):
            held_out = "test" if rank < n_test else "validation" if rank < n_test + n_val else "train"
            split_of[groups[g]] = held_out
    return {split: [s for s in speakers if split_of[s.group] == split] for split in SPLITS}


def _held_out_counts(groups: int, val_fraction: float, test_fraction: float) -> tuple[int, int]:
    """Voices held out for (test, validation). An engine with few voices (flite has four) gives one to
    test and none to validation: holding out two of four would leave training only two to learn from."""
    if groups < 3:  # too few voices to hold any out and still train on this engine
        return 0, 0
    n_test = max(1, round(groups * test_fraction))
    n_val = max(1, round(groups * val_fraction)) if groups >= 5 else 0
    return n_test, min(n_val, groups - n_test - 1)
