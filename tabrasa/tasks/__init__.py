"""Tasks: heads, losses, metrics and the LightningModules that join tokenizer, backbone and head."""

from tabrasa.tasks.classifier import Classifier
from tabrasa.tasks.heads import LinearHead
from tabrasa.tasks.joint import JointTask
from tabrasa.tasks.pooling import pool
from tabrasa.tasks.regressor import Regressor
from tabrasa.tasks.schedule import OptimConfig
from tabrasa.tasks.task import TokenTask

__all__ = ["Classifier", "JointTask", "LinearHead", "OptimConfig", "Regressor", "TokenTask", "pool"]
