"""Length-bucketed batches for variable-length inputs (text, protein), usable by any DataLoader and under DDP.

Batches drawn at random from long-tailed lengths are padded to their longest member, so most of the
attention and feed-forward work goes to padding. Bucketing (as in fairseq and AllenNLP) takes this process's
share of indices in a seeded order, cuts it into pools of `pool` batches, sorts each pool by length, cuts it
into batches and shuffles the batches: batches stay random across epochs, each holds similar lengths.

Distributed: the share comes from torch's `DistributedSampler` (num_replicas, rank; read from
torch.distributed when not given), so every rank gets the same number of batches and the order is fixed by
seed + epoch. Under Lightning DDP either build the DataLoader inside a LightningDataModule dataloader hook,
where Lightning passes its own DistributedSampler in through the `sampler` argument, or set
`Trainer(use_distributed_sampler=False)` and let this sampler shard by itself. Lightning calls `set_epoch`
on `batch_sampler.sampler`, which is the DistributedSampler here, so epochs advance on their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence, Sized
from typing import Any

import torch
import torch.distributed as dist
from torch.utils.data import BatchSampler, DistributedSampler, Sampler


class LengthBucketBatchSampler(BatchSampler):
    """Yields lists of dataset indices of about equal length; pass as `DataLoader(batch_sampler=...)`.

    lengths: the length of every example in the dataset (tokens, residues, frames).
    shuffle: False for evaluation: every index once, longest batch first (a memory problem shows at once).
    pool: how many batches are sorted together; larger pools pad less and shuffle less.
    sampler: the indices this process sees, in order. Default: a seeded DistributedSampler over all indices.
    """

    def __init__(
        self,
        lengths: Sequence[int],
        batch_size: int,
        drop_last: bool = False,
        *,
        sampler: Sampler[int] | None = None,
        shuffle: bool = True,
        seed: int = 0,
        pool: int = 50,
        num_replicas: int | None = None,
        rank: int | None = None,
    ) -> None:
        if isinstance(lengths, Sampler) or not isinstance(lengths, Sized):
            raise TypeError(
                f"LengthBucketBatchSampler needs the dataset's lengths first, got {type(lengths).__name__}. "
                f"If Lightning is injecting a distributed sampler, build the DataLoader inside the data "
                f"module's *_dataloader hook, or pass Trainer(use_distributed_sampler=False): this sampler "
                f"shards by itself"
            )
        if batch_size < 1 or pool < 1:
            raise ValueError(f"batch_size={batch_size} and pool={pool} must be >= 1")
        self.lengths = torch.as_tensor(lengths, dtype=torch.long)
        if sampler is None:
            replicas, rank = _world(num_replicas, rank)
            sampler = DistributedSampler(
                _Indices(len(self.lengths)), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        self.pool = pool

    def set_epoch(self, epoch: int) -> None:
        set_epoch = getattr(self.sampler, "set_epoch", None)
        if callable(set_epoch):
            set_epoch(epoch)

    @property
    def epoch(self) -> int:
        return int(getattr(self.sampler, "epoch", 0))

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[list[int]]:
        share = torch.tensor(list(self.sampler), dtype=torch.long)
        if not self.shuffle:
            share = share[torch.argsort(self.lengths[share], descending=True, stable=True)]
            yield from (b.tolist() for b in self._cut(share))
            return
        batches: list[torch.Tensor] = []
        for pool in share.split(self.batch_size * self.pool):
            batches.extend(self._cut(pool[torch.argsort(self.lengths[pool], stable=True)]))
        generator = torch.Generator().manual_seed(self.seed + self.epoch)
        for i in torch.randperm(len(batches), generator=generator).tolist():
            yield batches[i].tolist()

    def _cut(self, indices: torch.Tensor) -> list[torch.Tensor]:
        batches = list(indices.split(self.batch_size))
        if self.drop_last and batches and len(batches[-1]) < self.batch_size:
            batches.pop()
        return batches


def padding_fraction(batches: Sequence[Sequence[int]], lengths: Sequence[int]) -> float:
    """Share of padded token slots when each batch is padded to its longest member."""
    real = padded = 0
    for batch in batches:
        sizes = [lengths[i] for i in batch]
        real += sum(sizes)
        padded += max(sizes) * len(sizes)
    return 1.0 - real / max(padded, 1)


class _Indices(Sized):
    """The dataset DistributedSampler needs is only its length."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        return i


def _world(num_replicas: int | None, rank: int | None) -> tuple[int, int]:
    """Default to the initialised process group, else a single process."""
    running = dist.is_available() and dist.is_initialized()
    if num_replicas is None:
        num_replicas = dist.get_world_size() if running else 1
    if rank is None:
        rank = dist.get_rank() if running else 0
    if not 0 <= rank < num_replicas:
        raise ValueError(f"rank={rank} must be in [0, num_replicas={num_replicas})")
    return num_replicas, rank
