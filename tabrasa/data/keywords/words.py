"""The 35 words of Speech Commands v2 (Warden 2018): the label set of the spoken-keywords task.

Ordered as the dataset's documentation groups them (digits, commands, then the auxiliary words); a word's
position is its class index, so the order is part of the checkpoint format and never changes.
"""

from __future__ import annotations

from collections.abc import Sequence

DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
COMMANDS = ("yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go")
AUXILIARY = (
    "backward", "forward", "follow", "learn", "visual",
    "bed", "bird", "cat", "dog", "happy", "house", "marvin", "sheila", "tree", "wow",
)  # fmt: skip
WORDS: tuple[str, ...] = DIGITS + COMMANDS + AUXILIARY


def select_words(words: Sequence[str] | None) -> tuple[str, ...]:
    """None → all 35 words; otherwise the given words, which must be distinct Speech Commands words."""
    if words is None:
        return WORDS
    unknown = [w for w in words if w not in WORDS]
    if unknown:
        raise ValueError(f"words={list(words)}: {unknown} are not Speech Commands words; choose from {WORDS}")
    if len(set(words)) != len(words) or len(words) < 2:
        raise ValueError(f"words={list(words)} must be at least 2 distinct words (they are the classes)")
    return tuple(words)
