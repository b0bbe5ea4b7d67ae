"""The training loader of a joint run: one task per optimizer step, drawn by a seeded schedule.

Lightning's `CombinedLoader` runs several loaders side by side ("max_size_cycle", "min_size", …) or one
after another ("sequential"), but has no mode that samples tasks by weight, which multi-task and
multilingual training need (round robin, proportional to size, temperature-scaled: Arivazhagan et al.
2019, Conneau et al. 2020). This loader adds only that schedule on top of each task's own resumable,
DDP-sharded loader:

- Step i of epoch e trains task `schedule(e)[i]`; the schedule is a function of (seed, epoch) alone, so
  every DDP rank trains the same task at the same step (their gradients are all-reduced together) while
  each rank reads its own shard of that task (the task loader's `EpochSampler`).
- A task whose loader runs out starts its next pass (the sampler's next epoch); passes are per task.
- `state_dict()` holds the epoch, the step and every task loader's state, so a killed run resumes at the
  first step it had not trained, with every task at its own position.

Why one task per step, not a mix: each modality's batch has its own shapes (token counts, padding), so a
mixed step would run one forward per task anyway; one task per step keeps a step's cost that of a
single-task step, and the per-task loss weight then scales that task's gradient steps directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

import torch
from torch.utils.data import DataLoader

from tabrasa.errors import UserError

Sampling = Literal["round_robin", "proportional", "temperature"]
TaskBatch = tuple[str, Any]


def task_probabilities(sizes: Mapping[str, int], sampling: Sampling, temperature: float) -> dict[str, float]:
    """p_t ∝ n_t^(1/T): T = 1 is proportional to size, T → ∞ uniform; round robin is uniform in count."""
    if sampling == "round_robin":
        return {name: 1.0 / len(sizes) for name in sizes}
    if temperature <= 0:
        raise UserError(f"temperature={temperature} must be > 0 (1 = proportional, larger = flatter)")
    power = 1.0 if sampling == "proportional" else 1.0 / temperature
    weights = {name: float(n) ** power for name, n in sizes.items()}
    total = sum(weights.values())
    return {name: w / total for name, w in weights.items()}


class TaskScheduleLoader:
    """Yields (task name, batch) pairs, one per optimizer step; `len` is the steps of one epoch."""

    def __init__(
        self,
        loaders: Mapping[str, DataLoader[Any]],
        sizes: Mapping[str, int],
        sampling: Sampling = "temperature",
        temperature: float = 2.0,
        steps_per_epoch: int | None = None,
        seed: int = 0,
    ) -> None:
        if not loaders:
            raise UserError("a joint run needs at least one task")
        self.loaders = dict(loaders)
        self.names = list(self.loaders)
        self.sampling = sampling
        self.probabilities = task_probabilities(sizes, sampling, temperature)
        # Default epoch: as many steps as one pass over every task's batches.
        self.steps_per_epoch = steps_per_epoch or sum(len(loader) for loader in self.loaders.values())
        self.seed = seed
        self.epoch = 0
        self.step = 0  # steps handed out in the current epoch
        self._resumed = False
        self._began = False
        self._iterators: dict[str, Iterator[Any]] = {}

    def __len__(self) -> int:
        return self.steps_per_epoch

    def schedule(self, epoch: int) -> list[str]:
        """The task of every step of `epoch`: a function of (seed, epoch) only."""
        if self.sampling == "round_robin":
            offset = epoch * self.steps_per_epoch
            return [self.names[(offset + i) % len(self.names)] for i in range(self.steps_per_epoch)]
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
        weights = torch.tensor([self.probabilities[name] for name in self.names], dtype=torch.float64)
        draws = torch.multinomial(weights, self.steps_per_epoch, replacement=True, generator=generator)
        return [self.names[i] for i in draws.tolist()]

    def _next_batch(self, name: str) -> Any:
        loader = self.loaders[name]
        if name not in self._iterators:
            self._iterators[name] = iter(loader)
        try:
            return next(self._iterators[name])
        except StopIteration:
            sampler = getattr(loader, "sampler", None)
            if hasattr(sampler, "set_epoch"):
                sampler.set_epoch(int(getattr(sampler, "epoch", 0)) + 1)  # this task's next pass
            self._iterators[name] = iter(loader)
            return next(self._iterators[name])

    def __iter__(self) -> Iterator[TaskBatch]:
        # A new epoch begins when iteration begins again (Lightning stops asking after `len` batches, so
        # the end of a generator is not a reliable epoch boundary), unless a resume left us mid-epoch.
        if self._resumed:
            self._resumed = False
        else:
            if self._began:
                self.epoch += 1
            self.step = 0
        self._began = True
        order = self.schedule(self.epoch)
        while self.step < self.steps_per_epoch:
            name = order[self.step]
            batch = self._next_batch(name)
            self.step += 1
            yield name, batch

    def state_dict(self) -> dict[str, Any]:
        tasks = {
            name: loader.state_dict()  # type: ignore[attr-defined]
            for name, loader in self.loaders.items()
            if hasattr(loader, "state_dict")
        }
        return {"epoch": self.epoch, "step": self.step, "tasks": tasks, "names": self.names}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if list(state["names"]) != self.names:
            raise UserError(
                f"the checkpoint's joint run trained tasks {state['names']} but this run has {self.names}; "
                "resume with the same tasks, or start a new run from the checkpoint's weights instead"
            )
        self.epoch, self.step = int(state["epoch"]), int(state["step"])
        if self.step >= self.steps_per_epoch:
            self.epoch, self.step = self.epoch + 1, 0
        self._resumed = self.step > 0
        self._began = False  # the next iteration starts the loaded epoch, not the one after it
        self._iterators = {}
        for name, task_state in state["tasks"].items():
            self.loaders[name].load_state_dict(task_state)  # type: ignore[attr-defined]
