"""Length-bucketed batches: every index once, little padding, seeded by seed + epoch, equal shares per rank,
and Lightning's distributed-sampler injection."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler

from tabrasa.data.bucketing import LengthBucketBatchSampler, padding_fraction

LENGTHS = torch.randint(5, 500, (1000,), generator=torch.Generator().manual_seed(0)).tolist()


def test_every_index_once_with_far_less_padding_than_random_batches() -> None:
    sampler = LengthBucketBatchSampler(LENGTHS, batch_size=16, pool=50)
    batches = list(sampler)
    assert len(batches) == len(sampler) == 63
    assert sorted(i for b in batches for i in b) == list(range(1000))
    random_batches = torch.randperm(1000, generator=torch.Generator().manual_seed(0)).split(16)
    assert padding_fraction(batches, LENGTHS) < 0.05 < 0.3 < padding_fraction(random_batches, LENGTHS)


def test_order_is_fixed_by_seed_and_epoch() -> None:
    a, b = LengthBucketBatchSampler(LENGTHS, 8, seed=3), LengthBucketBatchSampler(LENGTHS, 8, seed=3)
    a.set_epoch(1)
    b.set_epoch(1)
    first = list(a)
    assert first == list(b) == list(a)  # the same epoch gives the same order, however often it is drawn
    a.set_epoch(2)
    assert list(a) != first
    assert list(LengthBucketBatchSampler(LENGTHS, 8, seed=4)) != list(
        LengthBucketBatchSampler(LENGTHS, 8, seed=3)
    )


def test_evaluation_is_longest_first_and_complete() -> None:
    sampler = LengthBucketBatchSampler([3, 9, 1, 7, 5], 2, shuffle=False)
    assert list(sampler) == [[1, 3], [4, 0], [2]]


def test_drop_last_drops_only_short_batches() -> None:
    batches = list(LengthBucketBatchSampler(LENGTHS[:100], 16, drop_last=True, pool=2))
    assert all(len(b) == 16 for b in batches)
    assert len(batches) == len(LengthBucketBatchSampler(LENGTHS[:100], 16, drop_last=True, pool=2))


@pytest.mark.parametrize("replicas", [2, 3])
def test_ranks_get_disjoint_shares_and_equal_batch_counts(replicas: int) -> None:
    n = 997  # not a multiple of the rank count
    shares = [
        list(LengthBucketBatchSampler(LENGTHS[:n], 8, num_replicas=replicas, rank=r, seed=1))
        for r in range(replicas)
    ]
    assert len({len(s) for s in shares}) == 1  # DDP steps in lockstep: every rank the same number of batches
    seen = [i for s in shares for b in s for i in b]
    assert set(seen) == set(range(n))
    assert len(seen) - n < replicas  # only DistributedSampler's padding to equal shares repeats an index


def test_works_as_a_dataloader_batch_sampler() -> None:
    data = [torch.zeros(n) for n in LENGTHS[:64]]
    loader = DataLoader(data, batch_sampler=LengthBucketBatchSampler(LENGTHS[:64], 8), collate_fn=list)
    assert sum(len(b) for b in loader) == 64


def test_lightning_injects_its_distributed_sampler_through_the_sampler_argument() -> None:
    lightning_data = pytest.importorskip("lightning_fabric.utilities.data")
    from torch.utils.data import BatchSampler

    data = list(range(100))
    # Lightning records the arguments of BatchSampler subclasses built inside its dataloader hooks.
    with lightning_data._replace_dunder_methods(BatchSampler):
        loader = DataLoader(data, batch_sampler=LengthBucketBatchSampler(LENGTHS[:100], 10))
    injected = DistributedSampler(data, num_replicas=2, rank=1, shuffle=True, seed=0)
    loader = lightning_data._update_dataloader(loader, injected)
    assert loader.batch_sampler.sampler is injected
    assert sorted(i for b in loader.batch_sampler for i in b) == sorted(injected)


def test_a_sampler_in_place_of_lengths_is_explained() -> None:
    with pytest.raises(TypeError, match="use_distributed_sampler=False"):
        LengthBucketBatchSampler(DistributedSampler(range(10), num_replicas=1, rank=0), 4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rank=2"):
        LengthBucketBatchSampler(LENGTHS, 4, num_replicas=2, rank=2)


def test_lightning_advances_the_epoch_through_batch_sampler_sampler() -> None:
    lightning_data = pytest.importorskip("lightning_fabric.utilities.data")
    sampler = LengthBucketBatchSampler(LENGTHS[:64], 8, seed=5)
    loader = DataLoader(list(range(64)), batch_sampler=sampler)
    lightning_data._set_sampler_epoch(loader, 3)
    reference = LengthBucketBatchSampler(LENGTHS[:64], 8, seed=5)
    reference.set_epoch(3)
    assert sampler.epoch == 3 and list(sampler) == list(reference)
