"""A training DataLoader whose order is a function of (seed, epoch) and that can resume mid-epoch.

PyTorch's shuffling DataLoader draws each epoch's permutation from the global RNG, whose state depends on
everything the run did before (dropout, augmentation), and Lightning restarts a resumed epoch's iterator
from its first batch. Both break "killed and resumed ends where an uninterrupted run ends". Here:

- `EpochSampler` is a DistributedSampler: epoch e's order is `randperm(n, seed + e)`, rank r takes every
  world-size-th example from r. One process with batch 2B therefore sees at every step exactly the examples
  two DDP ranks with batch B see together, and Lightning leaves it in place under DDP/FSDP (it only wraps
  samplers that are not DistributedSamplers).
- `ResumableLoader` counts the batches it hands out. Lightning saves the state of any train loader that has
  `state_dict`/`load_state_dict` with the fit loop and restores it before iterating again, so the resumed
  epoch starts at the first batch the killed run had not trained on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
from pytorch_lightning.utilities import rank_zero_warn
from torch.utils.data import DataLoader, Dataset, DistributedSampler


def global_seed() -> int:
    """The seed `seed_everything` set (Lightning's own DistributedSampler uses the same), else 0."""
    return int(os.environ.get("PL_GLOBAL_SEED", 0))


class EpochSampler(DistributedSampler):
    """DistributedSampler over this process's rank (one replica outside torch.distributed) that can start
    epoch `resume_epoch` at example `resume_start` of this rank's share."""

    def __init__(
        self,
        dataset: Dataset[Any],
        shuffle: bool = True,
        seed: int | None = None,
        num_replicas: int | None = None,
        rank: int | None = None,
    ) -> None:
        distributed = dist.is_available() and dist.is_initialized()
        super().__init__(
            dataset,
            num_replicas=num_replicas if num_replicas is not None or distributed else 1,
            rank=rank if rank is not None or distributed else 0,
            shuffle=shuffle,
            seed=global_seed() if seed is None else seed,
        )
        self._resume: tuple[int, int] | None = None

    def resume(self, epoch: int, start: int) -> None:
        """Make epoch `epoch` begin at example `start` of this rank's share (every time it is iterated)."""
        self.set_epoch(epoch)
        self._resume = (epoch, start)

    def __iter__(self) -> Iterator[int]:
        indices = list(super().__iter__())  # this rank's share of epoch self.epoch's permutation
        start = 0
        if self._resume is not None:
            epoch, resume_start = self._resume
            start = resume_start if epoch == self.epoch else 0
            if self.epoch > epoch:
                self._resume = None
        return iter(indices[start:])


class ResumableLoader(DataLoader):
    """DataLoader over an `EpochSampler` with a private generator (worker seeds then never draw from the
    global RNG, so the model's random state does not depend on how often loaders were created).

    Lightning calls `state_dict()` when it writes a checkpoint and `load_state_dict()` before iterating
    again on resume: the state is the epoch, the batches handed out so far in it and the layout that
    makes them meaningful (batch size, number of ranks).
    """

    def __init__(
        self,
        dataset: Dataset[Any],
        batch_size: int,
        shuffle: bool = True,
        seed: int | None = None,
        sampler: EpochSampler | None = None,
        **kwargs: Any,
    ) -> None:
        sampler = sampler or EpochSampler(dataset, shuffle=shuffle, seed=seed)
        generator = torch.Generator().manual_seed(sampler.seed)
        super().__init__(dataset, batch_size=batch_size, sampler=sampler, generator=generator, **kwargs)
        self.batches_yielded = 0

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        self.batches_yielded = 0
        # Worker seeds come from this generator: make them a function of the epoch, like the order.
        assert self.generator is not None
        self.generator.manual_seed(self.epoch_sampler.seed + self.epoch_sampler.epoch)
        for batch in super().__iter__():
            self.batches_yielded += 1
            yield batch

    @property
    def epoch_sampler(self) -> EpochSampler:
        assert isinstance(self.sampler, EpochSampler)
        return self.sampler

    def state_dict(self) -> dict[str, int]:
        sampler = self.epoch_sampler
        return {
            "epoch": sampler.epoch,
            "batches": self.batches_yielded,
            "batch_size": int(self.batch_size or 1),
            "replicas": sampler.num_replicas,
            "seed": sampler.seed,
        }

    def load_state_dict(self, state: dict[str, int]) -> None:
        sampler = self.epoch_sampler
        saved = (state["batch_size"], state["replicas"], state["seed"])
        if saved != (self.batch_size, sampler.num_replicas, sampler.seed):
            now = (self.batch_size, sampler.num_replicas, sampler.seed)
            rank_zero_warn(
                f"resuming with (batch size, ranks, seed) = {now} but the checkpoint was written with "
                f"{saved}: the resumed epoch replays its data from the start"
            )
            return
        epoch, done = state["epoch"], state["batches"]
        if done >= len(self):  # the epoch was finished: the next one starts from its beginning
            epoch, done = epoch + 1, 0
        sampler.resume(epoch, done * state["batch_size"])
