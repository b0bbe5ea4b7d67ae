"""ListOps (Nangia & Bowman 2018), as generated for the Long Range Arena (Tay et al. 2020): nested lists of
MIN, MAX, MED (median) and SM (sum modulo 10) over the digits 0-9; the label is the value of the whole
expression, one of 10 classes. Example: [MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ] → 5.

A reasoning task over long sequences: the answer depends on tokens far apart and on the nesting, which is
why LRA uses it to compare efficient attention. The generator follows LRA's: a random tree in which each
node is a digit with probability 1 - VALUE_P (always at max_depth) or else an operator over 2..max_args
subtrees; trees are drawn until one falls within [min_length, max_length] tokens. Sizes are arguments, so
a CPU run can use short sequences (LRA: 500-2000 tokens, depth 10, 10 arguments).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import Dataset

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
CLOSE = "]"
DIGITS = tuple(str(d) for d in range(10))
PAD, CLS = "<pad>", "<cls>"
VOCAB = (PAD, CLS, *DIGITS, *OPERATORS, CLOSE)  # id = position; PAD is 0
TOKEN_ID = {token: i for i, token in enumerate(VOCAB)}
NUM_CLASSES = 10
VALUE_P = 0.25  # LRA's probability that a node below max_depth is an operator

Tree = int | tuple[str, list["Tree"]]


@dataclass(frozen=True)
class ListOpsExample:
    tokens: tuple[str, ...]
    label: int


def solve(tree: Tree) -> int:
    """The value of an expression tree."""
    if isinstance(tree, int):
        return tree
    op, args = tree
    values = [solve(a) for a in args]
    if op == "[MIN":
        return min(values)
    if op == "[MAX":
        return max(values)
    if op == "[MED":
        return int(np.median(values))  # LRA's integer median (mean of the middle two, truncated)
    if op == "[SM":
        return sum(values) % 10
    raise ValueError(f"unknown ListOps operator {op!r}; expected one of {OPERATORS}")


def to_tokens(tree: Tree) -> list[str]:
    if isinstance(tree, int):
        return [str(tree)]
    op, args = tree
    return [op, *(t for a in args for t in to_tokens(a)), CLOSE]


class TreeTooLongError(Exception):
    """Raised by random_tree as soon as a tree outgrows its token budget."""


def random_tree(
    rng: np.random.Generator, max_depth: int, max_args: int, max_tokens: int | None = None
) -> Tree:
    """LRA's tree distribution. With max_tokens, stops as soon as the tree outgrows it (TreeTooLongError): the
    same accepted trees as building and then rejecting, without building the huge ones (each node is an
    operator with probability 1/4 and mean arity 6, a supercritical branching process)."""
    budget = [max_tokens if max_tokens is not None else float("inf")]

    def grow(depth: int) -> Tree:
        budget[0] -= 1
        if budget[0] < 0:
            raise TreeTooLongError
        if depth >= max_depth or rng.random() > VALUE_P:
            return int(rng.integers(10))
        budget[0] -= 1  # the closing bracket
        arity = int(rng.integers(2, max_args + 1))
        op = OPERATORS[int(rng.integers(len(OPERATORS)))]
        return op, [grow(depth + 1) for _ in range(arity)]

    return grow(1)


def generate_listops(
    num: int,
    min_length: int = 500,
    max_length: int = 2000,
    max_depth: int = 10,
    max_args: int = 10,
    seed: int = 0,
    max_draws: int = 100_000,
) -> list[ListOpsExample]:
    """`num` examples from one seeded generator, each of min_length to max_length tokens (CLS not counted)."""
    if not 1 <= min_length <= max_length:
        raise ValueError(f"need 1 <= min_length <= max_length, got {min_length} and {max_length}")
    if max_depth < 2 or max_args < 2:
        raise ValueError(f"max_depth={max_depth} and max_args={max_args} must be >= 2 to nest any operator")
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(num):
        for _ in range(max_draws):
            try:
                tree = random_tree(rng, max_depth, max_args, max_length)
            except TreeTooLongError:
                continue
            tokens = to_tokens(tree)
            if len(tokens) >= min_length:
                examples.append(ListOpsExample(tuple(tokens), solve(tree)))
                break
        else:
            raise ValueError(
                f"no ListOps tree of {min_length}-{max_length} tokens in {max_draws} draws with "
                f"max_depth={max_depth}, max_args={max_args}; raise max_depth or max_args, or lower "
                f"min_length"
            )
    return examples


def encode(tokens: Sequence[str]) -> torch.Tensor:
    """Token strings → ids with a leading CLS token, (N + 1,) long."""
    return torch.tensor([TOKEN_ID[CLS], *(TOKEN_ID[t] for t in tokens)], dtype=torch.long)


class ListOpsDataset(Dataset):
    """Encoded examples; `lengths` (with CLS) feeds tabrasa.data.bucketing.LengthBucketBatchSampler."""

    def __init__(self, examples: Sequence[ListOpsExample]) -> None:
        self.ids = [encode(e.tokens) for e in examples]
        self.labels = [e.label for e in examples]
        self.lengths = [len(i) for i in self.ids]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[i], "label": torch.tensor(self.labels[i])}


def collate(examples: Sequence[dict[str, torch.Tensor]], pad_to_multiple: int = 1) -> dict[str, torch.Tensor]:
    """Right-pad input_ids with PAD (id 0); mask is True at real tokens."""
    longest = max(len(e["input_ids"]) for e in examples)
    n = -(-longest // pad_to_multiple) * pad_to_multiple
    ids = torch.zeros(len(examples), n, dtype=torch.long)
    for row, e in enumerate(examples):
        ids[row, : len(e["input_ids"])] = e["input_ids"]
    return {
        "input_ids": ids,
        "mask": ids != TOKEN_ID[PAD],
        "label": torch.stack([e["label"] for e in examples]),
    }
