"""One task of a joint run as a single-task model: the view computes exactly JointTask's output, and its
embedder carries the task embedding, so attention drawn from it is the attention the task computed."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tabrasa.backbone import Encoder
from tabrasa.backbone.config import EncoderConfig
from tabrasa.deploy.predictor import Predictor
from tabrasa.deploy.run import TrainedRun
from tabrasa.serve.joint import TaskView
from tabrasa.tasks import JointTask
from tests.deploy.conftest import CLASSES, tokenizer_for


def joint(task_embedding: bool) -> JointTask:
    tokenizers = {"reviews": tokenizer_for("text"), "proteins": tokenizer_for("protein")}
    backbone = Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=80))
    model = JointTask(tokenizers, {"reviews": 2, "proteins": 3}, backbone, task_embedding=task_embedding)
    return model.eval()


@pytest.mark.parametrize("task_embedding", [False, True])
def test_the_view_computes_the_joint_tasks_output(task_embedding: bool) -> None:
    model = joint(task_embedding)
    tokenizer = tokenizer_for("protein")
    batch = tokenizer.collate([tokenizer.encode(s) for s in ("MKTAYIAK", "MSTNPKPQRK")])
    view = TaskView(model, "proteins").eval()
    with torch.no_grad():
        torch.testing.assert_close(view(batch), model("proteins", batch))
        tokens = view.embedder(batch)
        inner = model.embedders["proteins"](batch)
    if task_embedding:  # the task's vector is on every token, as JointTask.features adds it
        torch.testing.assert_close(tokens.x - inner.x, model.task_embed.weight[1].expand_as(inner.x))
    else:
        torch.testing.assert_close(tokens.x, inner.x)


def test_the_view_shares_the_backbone_and_predicts_through_the_predictor(tmp_path: Path) -> None:
    model = joint(True)
    view = TaskView(model, "reviews")
    assert view.backbone is model.backbone and view.objective is model.objectives["reviews"]
    run = TrainedRun(view, tokenizer_for("text"), CLASSES, tmp_path / "c.yaml", tmp_path / "m.ckpt")
    rows = Predictor(run).predict(["a good film", "a bad film"])
    assert [sorted(r) for r in rows] == [["error", "id", "prediction", "prob_neg", "prob_pos"]] * 2
    with pytest.raises(KeyError, match="no task 'nope'"):
        TaskView(model, "nope")
