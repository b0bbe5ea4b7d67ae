"""Tokenizers of a fixed alphabet whose every sequence is framed <cls> … <eos> (bytes, protein residues).

Their length rule is one: max_length counts both specials, and truncation cuts only what lies between.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.truncation import TruncationPolicy, check_truncation, truncate


class FramedTokenizer(Tokenizer):
    """max_length: ids of the longest sequence, <cls> and <eos> included. truncation: the policy for a
    longer one (`tabrasa.tokenizers.truncation`). pad_id: the alphabet's <pad>. Subclasses name their
    alphabet's <cls> and <eos> ids and check max_length against their own minimum."""

    cls_id: ClassVar[int]
    eos_id: ClassVar[int]

    def __init__(self, max_length: int, truncation: TruncationPolicy, pad_id: int) -> None:
        check_truncation(truncation)
        self.max_length = max_length
        self.truncation = truncation
        self.pad_id = pad_id

    def frame(self, body: Iterable[int], source: str) -> tuple[list[int], int]:
        """<cls> body <eos>, cut to max_length by the policy → (ids, ids removed); `source` names the
        sequence in the error of truncation "error"."""
        return truncate([self.cls_id, *body, self.eos_id], self.max_length, self.truncation, 1, 1, source)
