"""The synthetic tasks: each label is the function of the tokens its docstring names, and nothing else."""

from __future__ import annotations

import pytest
import torch

from benchmarks.evidence.synthetic_tasks import PAD, FirstTokensTask, RandomPairsTask, RecallTask


def test_first_tokens_label_is_a_function_of_the_first_tokens_only() -> None:
    task = FirstTokensTask(length=40, signal=3, classes=4, noise_vocab=5)
    batch = task.sample(64, torch.Generator().manual_seed(0))
    assert batch.ids.shape == (64, 40)
    torch.testing.assert_close(batch.label, batch.ids[:, 0] - 1)
    assert torch.all(batch.ids[:, :3] == batch.ids[:, :1])
    # Rewriting everything after the signal leaves the label unchanged, and it is from another vocabulary.
    noise = batch.ids[:, 3:]
    assert bool(((noise > task.classes) & (noise < task.vocab_size)).all())
    other = task.sample(64, torch.Generator().manual_seed(1))
    spliced = torch.cat([batch.ids[:, :3], other.ids[:, 3:]], dim=1)
    torch.testing.assert_close(spliced[:, 0] - 1, batch.label)
    assert set(batch.label.tolist()) == set(range(4)), "every class appears in 64 draws"


def test_first_tokens_rejects_a_signal_as_long_as_the_sequence() -> None:
    with pytest.raises(ValueError, match="signal=8 must be < length=8"):
        FirstTokensTask(length=8, signal=8)


def _stored_value(ids: torch.Tensor, key_ids: torch.Tensor) -> torch.Tensor:
    """The value id stored beside each row's key id, found by scanning the pair positions."""
    pairs = ids[:, :-1]  # (B, pairs, 2)
    slot = (pairs[..., 0] == key_ids[:, None]).int().argmax(dim=1)
    assert bool((pairs[..., 0] == key_ids[:, None]).any(dim=1).all()), "every queried key is stored"
    return pairs[torch.arange(len(ids)), slot, 1]


def test_recall_label_is_the_value_stored_under_the_query_key() -> None:
    task = RecallTask(pairs=4, keys=10, values=6)
    batch = task.sample(128, torch.Generator().manual_seed(0))
    assert batch.ids.shape == (128, 5, 2)
    assert all(len(set(row.tolist())) == 4 for row in batch.ids[:, :-1, 0]), "keys are distinct"
    assert bool((batch.ids[:, -1, 1] == PAD).all())
    torch.testing.assert_close(_stored_value(batch.ids, batch.ids[:, -1, 0]) - 1 - task.keys, batch.label)
    assert int(batch.ids[:, :-1].min()) > PAD and int(batch.ids.max()) < task.vocab_size


def test_two_query_recall_label_is_the_ordered_pair_of_values() -> None:
    task = RecallTask(pairs=4, keys=10, values=6, queries=2)
    batch = task.sample(128, torch.Generator().manual_seed(0))
    first = _stored_value(batch.ids, batch.ids[:, -1, 0]) - 1 - task.keys
    second_key = batch.ids[:, -1, 1] - task.keys - task.values  # back from the second-query id range
    second = _stored_value(batch.ids, second_key) - 1 - task.keys
    torch.testing.assert_close(first * task.values + second, batch.label)
    assert bool((batch.ids[:, -1, 0] != second_key).all()), "the two queried keys differ"
    assert task.classes == 36 and int(batch.label.max()) < 36


def test_recall_rejects_more_queries_than_it_supports() -> None:
    with pytest.raises(ValueError, match="queries=3 must be 1 or 2"):
        RecallTask(queries=3)


def test_random_pairs_table_is_fixed_by_its_seed_and_sampled_from() -> None:
    task = RandomPairsTask(size=16, length=5, vocab=7, classes=3, seed=4)
    again = RandomPairsTask(size=16, length=5, vocab=7, classes=3, seed=4)
    torch.testing.assert_close(task.table.ids, again.table.ids)
    batch = task.sample(32, torch.Generator().manual_seed(0))
    rows = (batch.ids[:, None, :] == task.table.ids[None]).all(-1)  # (32, 16): which table row it is
    assert bool(rows.any(dim=1).all())
    torch.testing.assert_close(batch.label, task.table.label[rows.int().argmax(dim=1)])
