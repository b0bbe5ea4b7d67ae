"""Any labelled data module's inputs without their labels: self-pretraining on a task's own data
(Amos et al. 2024, "Never Train from Scratch"). Only the source's training split is served for training
and its validation split for validation, so the test split is never seen, and `train_fraction` / `limit`
of the source apply: pretraining at 10% labelled data sees the same 10% of inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch.utils.data import DataLoader, Dataset

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.loader import LoaderConfig
from tabrasa.data.torch_dataset import already_batched
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.training.rebuild import check_retired_settings
from tabrasa.training.resumable_data import ResumableLoader


class WithoutLabels(Dataset[Batch]):
    """A batched dataset whose batches lose their `label`."""

    def __init__(self, dataset: Dataset[Batch]) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)  # type: ignore[arg-type]

    def __getitems__(self, indices: Sequence[int]) -> Batch:
        batch = dict(self.dataset.__getitems__(list(indices)))  # type: ignore[attr-defined]
        batch.pop("label", None)
        return batch

    def __getitem__(self, index: int) -> Batch:
        return self.__getitems__([index])


class InputsOf(TabrasaDataModule):
    """source: the labelled data module (class_path in YAML) whose train inputs are served; its tokenizer
    is the one linked into the model. loader: this module's own batch size and workers."""

    def __init__(
        self,
        source: TabrasaDataModule,
        loader: LoaderConfig = LoaderConfig(),  # noqa: B008
    ) -> None:
        # The source's own tokenizer, fitted (where it learns from data) on the source's training split.
        super().__init__(tokenizer=source._tokenizer, loader=loader)
        self.source = source
        self.limit = source.limit  # what this view serves is limited by its source

    @classmethod
    def retired_settings(cls, init_args: Mapping[str, Any], where: str) -> None:
        check_retired_settings(init_args.get("source"), f"{where} (source)")

    num_outputs = 0  # type: ignore[assignment]
    has_test_split = False  # the source's test split stays unseen for its downstream evaluation

    @property
    def tokenizer(self) -> Tokenizer:
        return self.source.tokenizer

    def prepare_data(self) -> None:
        self.source.prepare_data()

    def setup(self, stage: str | None = None) -> None:
        self.source.setup(stage)

    def dataset(self, split: str) -> Dataset[Batch]:
        if split not in ("train", "validation"):
            raise ValueError(f"InputsOf serves train and validation inputs only, not {split!r}")
        return WithoutLabels(self.source.dataset(split))

    def loader(self, split: str, shuffle: bool = False) -> DataLoader[Batch]:
        config = self.loader_config
        loader_class = ResumableLoader if shuffle else DataLoader
        kwargs: dict[str, Any] = {
            "num_workers": config.num_workers,
            "persistent_workers": config.num_workers > 0,
        }
        return loader_class(
            self.dataset(split),
            batch_size=config.batch_size,
            shuffle=shuffle,
            collate_fn=already_batched,
            **kwargs,
        )

    def test_dataloader(self) -> DataLoader[Batch]:
        raise ValueError("InputsOf never serves the source's test split: it stays unseen for evaluation")

    def predict_dataloader(self) -> DataLoader[Batch]:
        return self.test_dataloader()
