"""Training infrastructure: atomic safetensors checkpoints, exact resume, a reproducible data order."""

from tabrasa.training.checkpointing import ResumeCheckpoint, ResumeState
from tabrasa.training.fsdp import SafetensorsFSDPStrategy
from tabrasa.training.resumable_data import EpochSampler, ResumableLoader
from tabrasa.training.safetensors_io import (
    CorruptCheckpointError,
    SafetensorsCheckpointIO,
    load_checkpoint,
    load_hyper_parameters,
    save_checkpoint,
)

__all__ = [
    "CorruptCheckpointError",
    "EpochSampler",
    "ResumableLoader",
    "ResumeCheckpoint",
    "ResumeState",
    "SafetensorsCheckpointIO",
    "SafetensorsFSDPStrategy",
    "load_checkpoint",
    "load_hyper_parameters",
    "save_checkpoint",
]
