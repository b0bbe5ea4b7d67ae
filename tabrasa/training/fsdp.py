"""FSDP whose full-state-dict checkpoints are tabrasa's safetensors files, on save and on resume.

Lightning's FSDPStrategy writes a full state dict through the CheckpointIO plugin (so tabrasa's format and
atomic writes apply), but reads it back with torch's lazy zip loader, bypassing the plugin. This subclass
routes that one read through `tabrasa.training.load_checkpoint`; everything else (sharding, gathering the
state on rank 0, re-sharding the optimizer state on load) is Lightning's, unchanged.

Select it with `--trainer.strategy fsdp_safetensors` (registered with Lightning on import; CUDA devices).
Sharded checkpoints (`state_dict_type="sharded"`, a folder per checkpoint) are torch.distributed.checkpoint
files plus a pickle of the metadata: this strategy refuses that setting rather than load a pickle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytorch_lightning.strategies import FSDPStrategy, StrategyRegistry
from pytorch_lightning.strategies import fsdp as lightning_fsdp

from tabrasa.training.safetensors_io import load_checkpoint


class SafetensorsFSDPStrategy(FSDPStrategy):
    """Lightning's FSDPStrategy with full (rank-0 gathered) state dicts read by tabrasa's loader."""

    strategy_name = "fsdp_safetensors"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("state_dict_type", "full") != "full":
            raise ValueError(
                "SafetensorsFSDPStrategy writes full state dicts only; sharded FSDP checkpoints store their "
                "metadata as a pickle. Drop state_dict_type or set it to 'full'"
            )
        super().__init__(*args, **kwargs)

    def load_checkpoint(self, checkpoint_path: Any, weights_only: bool | None = None) -> dict[str, Any]:
        path = Path(self.broadcast(checkpoint_path))
        # Lightning's full-checkpoint branch calls `_lazy_load(path)` (torch.load of a zip); ours is the
        # same contract, a dict of CPU tensors, read from the safetensors file.
        lazy_load = lightning_fsdp._lazy_load
        lightning_fsdp._lazy_load = load_checkpoint
        try:
            return super().load_checkpoint(path, weights_only=weights_only)
        finally:
            lightning_fsdp._lazy_load = lazy_load


if SafetensorsFSDPStrategy.strategy_name not in StrategyRegistry:
    StrategyRegistry.register(
        SafetensorsFSDPStrategy.strategy_name,
        SafetensorsFSDPStrategy,
        description="FSDP with tabrasa's safetensors checkpoints (full state dict)",
    )
