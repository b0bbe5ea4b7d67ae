"""Training infrastructure: atomic safetensors checkpoints, exact resume, a reproducible data order."""

from tabrasa.training.best_checkpoint import BestCheckpoint, best_checkpoint_callback
from tabrasa.training.checkpointing import ResumeCheckpoint, ResumeState
from tabrasa.training.resumable_data import EpochSampler, ResumableLoader
from tabrasa.training.safetensors_io import (
    CorruptCheckpointError,
    SafetensorsCheckpointIO,
    load_checkpoint,
    load_hyper_parameters,
    save_checkpoint,
)

__all__ = [
    "BestCheckpoint",
    "CorruptCheckpointError",
    "EpochSampler",
    "ResumableLoader",
    "ResumeCheckpoint",
    "ResumeState",
    "SafetensorsCheckpointIO",
    "best_checkpoint_callback",
    "load_checkpoint",
    "load_hyper_parameters",
    "save_checkpoint",
]
