"""ListOps: golden values for the operators, the token ids, and the generator's length, label and seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchmarks.listops import (
    TOKEN_ID,
    VOCAB,
    ListOpsDataset,
    TreeTooLongError,
    collate,
    encode,
    generate_listops,
    random_tree,
    solve,
    to_tokens,
)


def parse(text: str):  # type: ignore[no-untyped-def]
    """The inverse of to_tokens, to write golden trees as LRA prints them."""
    tokens = text.split()

    def read(i: int):  # type: ignore[no-untyped-def]
        if tokens[i].startswith("["):
            op, args, i = tokens[i], [], i + 1
            while tokens[i] != "]":
                arg, i = read(i)
                args.append(arg)
            return (op, args), i + 1
        return int(tokens[i]), i + 1

    tree, end = read(0)
    assert end == len(tokens)
    return tree


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ]", 5),
        ("[MIN 7 [MAX 1 9 ] 8 ]", 7),
        ("[MED 1 2 3 4 ]", 2),  # integer median of an even count: mean of the middle two, truncated
        ("[SM 9 8 7 ]", 4),
        ("[SM [MED 9 0 ] [MAX 3 [SM 5 5 ] ] 2 ]", 9),
        ("6", 6),
    ],
)
def test_golden_values(text: str, value: int) -> None:
    tree = parse(text)
    assert solve(tree) == value
    assert " ".join(to_tokens(tree)) == text


def test_token_ids_are_fixed() -> None:
    assert VOCAB[:3] == ("<pad>", "<cls>", "0")
    assert [TOKEN_ID[t] for t in ("[MIN", "[MAX", "[MED", "[SM", "]")] == [12, 13, 14, 15, 16]
    assert encode(["[MAX", "3", "9", "]"]).tolist() == [1, 13, 5, 11, 16]


def test_generator_respects_lengths_labels_and_seed() -> None:
    examples = generate_listops(40, min_length=30, max_length=60, max_depth=6, max_args=5, seed=7)
    assert all(30 <= len(e.tokens) <= 60 for e in examples)
    assert all(solve(parse(" ".join(e.tokens))) == e.label for e in examples)
    assert examples == generate_listops(40, min_length=30, max_length=60, max_depth=6, max_args=5, seed=7)
    assert examples != generate_listops(40, min_length=30, max_length=60, max_depth=6, max_args=5, seed=8)
    assert len({e.label for e in examples}) > 3


def test_random_tree_stops_at_its_budget() -> None:
    rng = np.random.default_rng(0)
    sizes = []
    for _ in range(200):
        try:
            sizes.append(len(to_tokens(random_tree(rng, 10, 10, max_tokens=20))))
        except TreeTooLongError:
            sizes.append(None)
    assert all(s is None or s <= 20 for s in sizes) and None in sizes


def test_impossible_lengths_are_explained() -> None:
    with pytest.raises(ValueError, match="raise max_depth or max_args"):
        generate_listops(1, min_length=200, max_length=300, max_depth=2, max_args=3, max_draws=50)
    with pytest.raises(ValueError, match="min_length <= max_length"):
        generate_listops(1, min_length=10, max_length=5)


def test_dataset_and_collate_pad_with_a_mask() -> None:
    data = ListOpsDataset(generate_listops(3, min_length=5, max_length=40, max_depth=4, max_args=4))
    batch = collate([data[i] for i in range(3)], pad_to_multiple=8)
    assert batch["input_ids"].shape == (3, 8 * -(-max(data.lengths) // 8))
    assert batch["mask"].sum(1).tolist() == data.lengths
    assert (batch["input_ids"][:, 0] == TOKEN_ID["<cls>"]).all()
    assert torch.equal(batch["label"], torch.tensor(data.labels))
