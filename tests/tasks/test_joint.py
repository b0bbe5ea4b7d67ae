"""The joint module: one backbone instance for several tasks, per-task metrics and the stated aggregate,
and the mistakes a joint config can hold, each refused before training with the task named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import datasets
import pytest
import pytorch_lightning as pl
import torch

from tabrasa.backbone import Encoder, EncoderConfig, SequenceLSTM
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.joint import JointDataModule
from tabrasa.data.loader import LoaderConfig
from tabrasa.errors import UserError
from tabrasa.tasks import JointTask, OptimConfig
from tabrasa.tasks.pooling import pool
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer


class TinyModule(TabrasaDataModule):
    """Labelled strings in memory: `positive` holds for the first half of the label set."""

    def __init__(
        self, texts: list[str], labels: list[int], names: list[str], tokenizer: Tokenizer, **kw: Any
    ):
        super().__init__(tokenizer=tokenizer, loader=LoaderConfig(batch_size=4, num_workers=0), **kw)
        self.rows = {"text": texts, "label": labels}
        self.names = names

    def load_splits(self) -> datasets.DatasetDict:
        features = datasets.Features(
            {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=self.names)}
        )
        table = datasets.Dataset.from_dict(self.rows, features=features)
        return datasets.DatasetDict({split: self.take(table) for split in ("train", "validation", "test")})

    def raw_input(self, row: dict[str, Any], split: str) -> Any:
        return row["text"] if isinstance(self.tokenizer, ByteTokenizer) else {"sequence": row["text"]}


def reviews(**kw: Any) -> TinyModule:
    texts = ["a fine film", "a great film", "an awful film", "a dull film"] * 4
    return TinyModule(texts, [1, 1, 0, 0] * 4, ["neg", "pos"], ByteTokenizer(max_length=24), **kw)


def proteins(**kw: Any) -> TinyModule:
    texts = ["MKKLLA", "MKKLLV", "GGSWPQ", "GGSWPE", "DDEEKR", "DDEEKK"] * 3
    labels = [0, 0, 1, 1, 2, 2] * 3
    return TinyModule(texts, labels, ["a", "b", "c"], ProteinTokenizer(max_length=16), **kw)


def joint_module(**kw: Any) -> JointDataModule:
    return JointDataModule({"reviews": reviews(), "proteins": proteins()}, sampling="round_robin", **kw)


def model_for(data: JointDataModule, backbone: torch.nn.Module | None = None, **kw: Any) -> JointTask:
    data.setup("fit")
    backbone = backbone or Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=32, dropout=0.0))
    return JointTask(data.tokenizer, data.num_outputs, backbone, optimizer=OptimConfig(lr=3e-3), **kw)


def test_every_task_trains_the_one_backbone() -> None:
    data = joint_module()
    model = model_for(data)
    assert set(model.embedders) == {"reviews", "proteins"}
    for name in ("reviews", "proteins"):
        model.zero_grad()
        batch = next(iter(data.tasks[name].train_dataloader()))
        model.objectives[name].loss(model(name, batch), batch["label"]).backward()
        qkv = model.backbone.blocks[0].attn.qkv.weight.grad
        assert qkv is not None and qkv.abs().sum() > 0, f"{name} does not reach the shared backbone"
        other = next(n for n in model.embedders if n != name)
        assert all(p.grad is None or not p.grad.any() for p in model.embedders[other].parameters())


@pytest.mark.parametrize("task_embedding", [False, True])
def test_fit_logs_per_task_metrics_and_the_mean(tmp_path: Path, task_embedding: bool) -> None:
    data = joint_module()
    model = model_for(data, task_embedding=task_embedding)
    trainer = pl.Trainer(max_epochs=8, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, default_root_dir=tmp_path)  # fmt: skip
    trainer.fit(model, datamodule=data)
    trainer.test(model, datamodule=data, verbose=False)
    logged = trainer.callback_metrics
    for name in ("reviews", "proteins"):
        assert {f"{name}/test/acc", f"{name}/test/f1", f"{name}/test/loss"} <= logged.keys()
    mean = (logged["reviews/test/acc"] + logged["proteins/test/acc"]) / 2
    assert float(logged["test/acc_mean"]) == pytest.approx(float(mean))
    assert float(logged["reviews/test/acc"]) == 1.0 and float(logged["proteins/test/acc"]) == 1.0  # learnt
    assert model.selection_metric == ("val/acc_mean", "max")
    predictions = trainer.predict(model, datamodule=data)
    assert predictions is not None and [p[0]["task"] for p in predictions] == ["reviews", "proteins"]  # type: ignore[index]
    assert predictions[1][0]["predictions"].shape[-1] == 3  # type: ignore[index]


def first_batch(data: JointDataModule, task: str) -> dict[str, torch.Tensor]:
    return next(iter(data.tasks[task].train_dataloader()))


def update_reaches(model: JointTask, data: JointDataModule, trained: str, other: str) -> bool:
    """One SGD step on `trained`'s loss alone; whether `other`'s features move. Only the backbone is
    common to both (the other task's embedder and head get no gradient), so they move only if it is."""
    model.train(False)  # no dropout: the features change only through the step
    probe = first_batch(data, other)
    before = model.features(other, probe).detach()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    optimizer.zero_grad()
    batch = first_batch(data, trained)
    model.objectives[trained].loss(model(trained, batch), batch["label"]).backward()
    optimizer.step()
    after = model.features(other, probe).detach()
    return not torch.allclose(before, after)


class CopiedBackbones(JointTask):
    """A deliberately broken joint module: each task runs its own copy of the backbone."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.copies = torch.nn.ModuleDict({n: copy.deepcopy(self.backbone) for n in self.names})

    def features(self, task: str, batch: Batch) -> torch.Tensor:
        tokens = self.embedders[task](batch)
        return pool(self.copies[task](tokens.x, tokens.mask, grid=tokens.grid), tokens.mask, self.pooling)


@pytest.mark.parametrize("kind", ["encoder", "lstm"])
def test_the_backbone_is_one_instance_every_task_runs(kind: str) -> None:
    data = joint_module()
    backbone = SequenceLSTM(dim=32) if kind == "lstm" else None
    model = model_for(data, backbone=backbone)
    assert backbone is None or model.backbone is backbone
    calls: list[int] = []
    model.backbone.register_forward_hook(lambda module, args, out: calls.append(args[0].shape[0]))
    for name in ("reviews", "proteins"):
        model(name, first_batch(data, name))
    assert calls == [4, 4], "a task's forward bypassed the shared backbone"
    assert update_reaches(model, data, trained="proteins", other="reviews")
    assert update_reaches(model, data, trained="reviews", other="proteins")


def test_per_task_backbone_copies_are_caught() -> None:
    """Counter-test: with one backbone copy per task, an update from one task never reaches the other."""
    data = joint_module()
    data.setup("fit")
    backbone = SequenceLSTM(dim=32)
    model = CopiedBackbones(data.tokenizer, data.num_outputs, backbone, optimizer=OptimConfig(lr=3e-3))
    assert not update_reaches(model, data, trained="proteins", other="reviews")


def test_only_keeps_a_subset_and_names_unknown_tasks() -> None:
    assert joint_module(only=["proteins"]).names == ["proteins"]
    with pytest.raises(UserError, match=r"unknown tasks \['music'\]"):
        joint_module(only=["music"])
    with pytest.raises(UserError, match="names a task twice"):
        joint_module(only=["proteins", "proteins"])


def test_per_task_settings_must_name_real_tasks() -> None:
    with pytest.raises(UserError, match=r"loss_weights names tasks \['imdb'\]"):
        model_for(joint_module(), loss_weights={"imdb": 2.0})
    with pytest.raises(UserError, match="loss_weights\\['reviews'\\]=-1"):
        model_for(joint_module(), loss_weights={"reviews": -1.0})


def test_a_head_that_does_not_fit_the_labels_names_the_task() -> None:
    data = joint_module()
    data.setup("fit")
    outputs = {**data.num_outputs, "reviews": 1}  # a one-class "classifier"
    backbone = Encoder(EncoderConfig(dim=32, depth=1, heads=4, max_len=32))
    with pytest.raises(UserError, match="task 'reviews': a classifier needs at least 2 classes"):
        JointTask(data.tokenizer, outputs, backbone)


def test_an_embedder_of_another_width_names_the_task() -> None:
    class WideBytes(ByteTokenizer):
        def embedder(self, dim: int) -> torch.nn.Module:  # type: ignore[override]
            return super().embedder(dim * 2)

    data = JointDataModule(
        {"reviews": reviews(), "wide": TinyModule(["ab"] * 8, [0, 1] * 4, ["x", "y"], WideBytes())}
    )
    data.setup("fit")
    with pytest.raises(UserError, match="task 'wide': its embedder makes tokens of width 64"):
        JointTask(
            data.tokenizer, data.num_outputs, Encoder(EncoderConfig(dim=32, depth=1, heads=4, max_len=32))
        )


def test_a_task_without_training_examples_is_named_before_training() -> None:
    data = JointDataModule({"reviews": reviews(), "empty": proteins(train_fraction=1.0)})
    data.setup("fit")
    data.tasks["empty"]._splits["train"] = data.tasks["empty"].splits["train"].select([])  # type: ignore[index]
    with pytest.raises(UserError, match=r"task\(s\) \['empty'\] have no training examples"):
        data.train_dataloader()


def test_a_task_whose_data_fails_to_build_is_named() -> None:
    class Broken(TinyModule):
        def load_splits(self) -> datasets.DatasetDict:
            raise UserError("/data/missing.csv does not exist; check train_path")

    data = JointDataModule({"reviews": reviews(), "mine": Broken([], [], ["a", "b"], ByteTokenizer())})
    with pytest.raises(UserError, match=r"task 'mine': /data/missing\.csv does not exist"):
        data.setup("fit")
