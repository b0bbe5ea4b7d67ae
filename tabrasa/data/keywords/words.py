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


# Babble is chatter of these phrases, never of the keywords: a background that says "seven" would make the
# label ambiguous. Everyday phrases of one to four words, none containing a keyword (checked in tests).
BABBLE_PHRASES = (
    "what time is it", "please pass the salt", "I think so", "the train is late", "good morning everyone",
    "see you later", "that sounds fine", "where are my keys", "the weather is nice", "thank you very much",
    "can you hear me", "we should leave soon", "it was a long day", "maybe tomorrow", "the coffee is cold",
    "let me check", "how was the meeting", "nice to meet you", "the shop is closed", "just a moment",
    "I forgot my umbrella", "what did she say", "this is delicious", "call me back", "the music is loud",
    "are you ready", "we missed the bus", "such a lovely garden", "I agree with that", "where is the station",
    "the children are playing", "put it in the box", "a cup of tea", "the window is open", "really",
    "absolutely", "excuse me", "of course", "fantastic", "interesting", "probably", "whatever you like",
    "the paper says rain", "turn the page", "my sister called", "a quiet evening", "the milk is finished",
    "someone is knocking",
)  # fmt: skip
