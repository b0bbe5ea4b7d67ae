"""Several tasks' data modules behind one: the data side of a joint run on one shared backbone.

`tasks` maps a task name to any tabrasa data module (the shipped ones or the user-data ones), exactly as a
single-task config writes its `data:` block. Training yields one task's batch per step on the schedule of
`tabrasa.training.task_schedule` (round robin, proportional or temperature-scaled sampling); validation,
test and predict run every task's loader in turn, one Lightning dataloader per task, in the order of
`tasks`. The CLI links `tokenizer` and `num_outputs` (here: one per task) into the joint model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytorch_lightning as pl
from torch.utils.data import DataLoader

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.unlabelled.base import UnlabelledDataModule
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.training.rebuild import check_retired_settings
from tabrasa.training.task_schedule import Sampling, TaskScheduleLoader


class JointDataModule(pl.LightningDataModule):
    """tasks: name → data module (labelled, or unlabelled for joint pretraining). only: train on this
    subset of the names (a one-line override, `--data.init_args.only [imdb,psortb]`). sampling /
    temperature: how steps are shared between tasks (p_t ∝ n_t^(1/T); T = 1 proportional to
    training-set size, large T uniform). steps_per_epoch: default one pass over every task's batches.
    limit: at most this many examples per split of every task (set on the command line, it is copied
    into every task's data module before they are built)."""

    def __init__(
        self,
        tasks: dict[str, TabrasaDataModule | UnlabelledDataModule],
        only: list[str] | None = None,
        sampling: Sampling = "temperature",
        temperature: float = 2.0,
        steps_per_epoch: int | None = None,
        limit: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if not tasks:
            raise UserError("a joint data module needs at least one task under `tasks:`")
        if only is not None:
            unknown = sorted(set(only) - set(tasks))
            if unknown:
                raise UserError(f"only={only} names unknown tasks {unknown}; the tasks are {sorted(tasks)}")
            if len(set(only)) != len(only):
                raise UserError(f"only={only} names a task twice; list each task once")
            tasks = {name: tasks[name] for name in only}
        if steps_per_epoch is not None and steps_per_epoch < 1:
            raise UserError(f"steps_per_epoch={steps_per_epoch} must be >= 1 or null")
        self.tasks = dict(tasks)
        self.sampling = sampling
        self.temperature = temperature
        self.steps_per_epoch = steps_per_epoch
        self.seed = seed
        if limit is not None:
            # Data modules apply limit while they are built (before synthesis, vocabularies, caches), so
            # it must reach them then: the CLI copies it into every task's init_args before instantiation.
            differ = [name for name, module in self.tasks.items() if module.limit != limit]
            if differ:
                raise UserError(
                    f"limit={limit} but task(s) {differ} were built with another limit; from Python, pass "
                    "limit to each task's data module (`--data.init_args.limit N` does it for you)"
                )

    @classmethod
    def retired_settings(cls, init_args: Mapping[str, Any], where: str) -> None:
        """Each task's data section, checked by its own class (a saved run of an older tabrasa)."""
        for name, section in (init_args.get("tasks") or {}).items():
            check_retired_settings(section, f"{where} (task {name!r})")

    @property
    def names(self) -> list[str]:
        return list(self.tasks)

    @property
    def has_test_split(self) -> bool:
        """False for a joint pretraining run: its unlabelled tasks keep no test split."""
        return all(getattr(module, "has_test_split", True) for module in self.tasks.values())

    # What the CLI links into the joint model: one entry per task --------------------------------------
    @property
    def tokenizer(self) -> dict[str, Tokenizer]:
        return {name: self._task_call(name, lambda m: m.tokenizer) for name in self.names}

    @property
    def num_outputs(self) -> dict[str, int]:
        return {name: self._task_call(name, lambda m: m.num_outputs) for name in self.names}

    @property
    def class_names(self) -> dict[str, Sequence[str] | None]:
        return {name: getattr(module, "class_names", None) for name, module in self.tasks.items()}

    def _task_call(self, name: str, action: Any) -> Any:
        """Run one task's step, naming the task when it fails (a missing dataset, a bad setting)."""
        try:
            return action(self.tasks[name])
        except UserError as error:
            raise UserError(f"task {name!r}: {error}") from error

    # Lightning hooks ---------------------------------------------------------------------------------
    def prepare_data(self) -> None:
        for name in self.names:
            self._task_call(name, lambda m: m.prepare_data())

    def setup(self, stage: str | None = None) -> None:
        for name in self.names:
            self._task_call(name, lambda m: m.setup(stage))

    def train_sizes(self) -> dict[str, int]:
        # len(dataset("train")) counts labelled and unlabelled (pretraining) modules alike.
        sizes = {name: len(self.tasks[name].dataset("train")) for name in self.names}
        empty = [name for name, n in sizes.items() if n == 0]
        if empty:
            raise UserError(
                f"task(s) {empty} have no training examples (after limit); raise --data.init_args.limit "
                "or drop them with --data.init_args.only"
            )
        return sizes

    def train_dataloader(self) -> TaskScheduleLoader:
        sizes = self.train_sizes()
        loaders = {name: self._task_call(name, lambda m: m.train_dataloader()) for name in self.names}
        return TaskScheduleLoader(
            loaders, sizes, self.sampling, self.temperature, self.steps_per_epoch, seed=self.seed
        )

    def _per_task(self, method: str) -> list[DataLoader[Any]]:
        return [self._task_call(name, lambda m: getattr(m, method)()) for name in self.names]

    def val_dataloader(self) -> list[DataLoader[Any]]:
        return self._per_task("val_dataloader")

    def test_dataloader(self) -> list[DataLoader[Any]]:
        return self._per_task("test_dataloader")

    def predict_dataloader(self) -> list[DataLoader[Any]]:
        return self._per_task("predict_dataloader")

    def state_dict(self) -> dict[str, Any]:
        return {name: module.state_dict() for name, module in self.tasks.items()}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        for name, state in state_dict.items():
            if name in self.tasks:
                self.tasks[name].load_state_dict(state)
