"""Explicit truncation policies for token sequences: nothing is cut unless the policy says so."""

from __future__ import annotations

from typing import Literal, get_args

TruncationPolicy = Literal["error", "head", "tail", "head_tail"]


def check_truncation(policy: str) -> None:
    """A tokenizer's `truncation` setting must name a policy: checked when it is built, not at the first
    sequence too long for it."""
    if policy not in get_args(TruncationPolicy):
        raise ValueError(f"truncation={policy!r} is not known; choose error, head, tail or head_tail")


def truncate(
    ids: list[int], max_length: int, policy: TruncationPolicy, prefix: int, suffix: int, source: str
) -> tuple[list[int], int]:
    """Cut `ids` to `max_length`, keeping `prefix` leading and `suffix` trailing special tokens.

    head: keep the beginning. tail: keep the end. head_tail: keep the first quarter and last three
    quarters of the budget (Sun et al. 2019 found head+tail best for long reviews). error: raise.
    Returns (ids, number of tokens removed).
    """
    excess = len(ids) - max_length
    if excess <= 0:
        return ids, 0
    if policy == "error":
        raise ValueError(
            f"{source} has {len(ids)} tokens, more than max_length={max_length}; raise max_length or choose "
            f"truncation: head, tail or head_tail"
        )
    body = ids[prefix : len(ids) - suffix]
    budget = max_length - prefix - suffix
    if budget < 1:
        raise ValueError(
            f"max_length={max_length} leaves no room for content beside the {prefix + suffix} special "
            f"tokens; raise max_length to at least {prefix + suffix + 1}"
        )
    if policy == "head":
        kept = body[:budget]
    elif policy == "tail":
        kept = body[len(body) - budget :]
    elif policy == "head_tail":
        head = budget // 4
        kept = body[:head] + body[len(body) - (budget - head) :]
    else:
        raise ValueError(f"truncation={policy!r} is not known; choose error, head, tail or head_tail")
    return ids[:prefix] + kept + ids[len(ids) - suffix :], excess
