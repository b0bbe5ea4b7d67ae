"""One task of a joint run as a single-task model, so the Predictor, the ONNX export and the attention
capture take it as they take a Classifier: `.embedder`, `.backbone`, `.objective`, `forward(batch)`.

A joint run shares one backbone between its tasks; each task keeps its own embedder and head
(tabrasa/tasks/joint.py). The view holds references, not copies: the shared backbone stays one module.
Where the run learned a task embedding, the view's embedder adds that task's vector to every token, as
`JointTask.features` does, so attention drawn from `view.embedder` is the attention the task computed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import torch
from torch import nn

from tabrasa.tasks.joint import JointTask
from tabrasa.tokenizers.base import Batch, Embedder, Tokens


class TaskEmbedder(Embedder):
    """A task's embedder, plus the run's learned vector for that task on every token (if it has one)."""

    def __init__(self, inner: Embedder, task_vector: torch.Tensor | None) -> None:
        super().__init__()
        self.inner = inner
        self.dim = inner.dim
        self.register_buffer("task_vector", task_vector, persistent=False)  # moves with the module

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        tokens = self.inner(batch)
        if self.task_vector is None:
            return tokens
        return replace(tokens, x=tokens.x + self.task_vector)


class TaskView(nn.Module):
    """Task `name` of `joint`: its embedder → the shared backbone → its head (JointTask.forward)."""

    def __init__(self, joint: JointTask, name: str) -> None:
        super().__init__()
        if name not in joint.names:
            raise KeyError(f"the joint run has no task {name!r}; its tasks are {joint.names}")
        self.joint = joint
        self.name = name
        self.backbone = joint.backbone
        embed = joint.task_embed
        vector = None if embed is None else embed.weight[joint.names.index(name)].detach().clone()
        self.embedder = TaskEmbedder(joint.embedders[name], vector)
        self.objective = joint.objectives[name]
        self.pooling = joint.pooling

    def forward(self, batch: Batch) -> torch.Tensor:
        return self.joint(self.name, batch)
