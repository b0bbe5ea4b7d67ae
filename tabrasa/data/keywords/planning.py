"""What to synthesise: each split's (speaker, word) clips and (speaker, phrase) babble material.

Both are seeded orders over the split's own speakers, so no voice is heard in two splits, not even in
the background. `limit` keeps a prefix of each order (a small, consistent subset for smoke tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabrasa.data.keywords.speakers import SPLITS, speaker_table, split_speakers
from tabrasa.data.keywords.synthesis import Job
from tabrasa.data.keywords.words import BABBLE_PHRASES


@dataclass(frozen=True)
class Plan:
    words: dict[str, list[Job]]  # split → (speaker, keyword), the rows
    babble: dict[str, list[Job]]  # split → (speaker, phrase), the babble noise material


def plan(
    words: tuple[str, ...],
    speakers: int,
    seed: int,
    flite_fraction: float,
    val_fraction: float,
    test_fraction: float,
    babble_utterances: int,
    limit: int | None = None,
) -> Plan:
    table = speaker_table(speakers, seed, flite_fraction)
    by_split = split_speakers(table, seed, val_fraction, test_fraction)
    rows, babble = {}, {}
    for split_id, split in enumerate(SPLITS):
        voices = by_split[split]
        if not voices:
            raise ValueError(f"speakers={speakers} leaves no voice for {split}; use more speakers")
        pairs = [(speaker, word) for speaker in voices for word in words]
        order = np.random.default_rng([seed, 4, split_id]).permutation(len(pairs))
        rows[split] = [pairs[i] for i in order[:limit]]
        count = babble_utterances if limit is None else min(babble_utterances, max(8, limit))
        rng = np.random.default_rng([seed, 8, split_id])
        babble[split] = [
            (voices[int(rng.integers(len(voices)))], BABBLE_PHRASES[int(rng.integers(len(BABBLE_PHRASES)))])
            for _ in range(count)
        ]
    return Plan(rows, babble)
