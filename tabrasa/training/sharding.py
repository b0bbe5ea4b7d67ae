"""Sharded data parallelism for tabrasa tasks: FSDP on CUDA, FSDP2 on CUDA and CPU, both Lightning strategies.

Fully sharded data parallelism (Zhao et al. 2023, "PyTorch FSDP"; Rajbhandari et al. 2020, ZeRO) keeps
1/N of every parameter, gradient and AdamW moment on each of N ranks and gathers one wrapped unit at a time
when it runs. The unit is the transformer block (and the repeated layer of the other backbones): gathering
a block costs one all-gather of its weights, and at most a block or two plus the root unit (embedder,
positions, final norm, head) are whole at a time.

- `TabrasaFSDPStrategy` (`--trainer.strategy tabrasa_fsdp`): Lightning's FSDPStrategy (torch's
  FullyShardedDataParallel, "FSDP1") with the block as wrap and activation-checkpointing unit. CUDA only:
  Lightning refuses a CPU accelerator for FSDP (Lightning issue #21812), and so does tabrasa, naming the
  alternatives, before training.
- `FSDP2Strategy` (`--trainer.strategy tabrasa_fsdp2`): Lightning's ModelParallelStrategy with one
  data-parallel mesh dimension over every rank; the task's `configure_model` calls `shard_blocks`, which
  applies torch's per-parameter `fully_shard` ("FSDP2") to each block, then to the whole task. It runs on
  nccl and on gloo on CPU (tests/training/test_sharding.py trains it on two CPU processes against DDP).

Both write sharded checkpoints by default (a folder of torch distributed-checkpoint shards, one file per
rank, which a run on the same number of ranks resumes from) or one full checkpoint file gathered on rank 0
(`state_dict_type="full"`, `save_distributed_checkpoint=False`). Lightning reads both back itself, bypassing
CheckpointIO plugins, so under these strategies checkpoints are Lightning's torch format, not safetensors;
`tabrasa.training.sharded_checkpoint.consolidate_checkpoint` turns either into a safetensors checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Literal

import pytorch_lightning as pl
import torch
from lightning_fabric.utilities.types import _PATH
from pytorch_lightning.accelerators import CUDAAccelerator
from pytorch_lightning.strategies import FSDPStrategy, ModelParallelStrategy, Strategy, StrategyRegistry
from torch import nn
from torch.distributed.constants import default_pg_timeout

from tabrasa.backbone.block import Block
from tabrasa.backbone.conv_blocks import ResidualConv2d
from tabrasa.backbone.gau import GatedAttentionUnit
from tabrasa.backbone.mamba_block import MambaLayer
from tabrasa.backbone.sequence_cnn import ResidualConv1d
from tabrasa.errors import UserError
from tabrasa.training.safetensors_io import SafetensorsCheckpointIO
from tabrasa.training.sharded_checkpoint import remove_checkpoint_path, rng_state_globals

# What each sharded unit is: the repeated layer of every backbone (transformer block, gated attention unit,
# Mamba layer, the CNN baselines' residual blocks). The LSTM baseline is a single nn.LSTM with no such
# layer, so shard_blocks refuses it.
SHARD_UNITS: tuple[type[nn.Module], ...] = (
    Block,
    GatedAttentionUnit,
    MambaLayer,
    ResidualConv1d,
    ResidualConv2d,
)

FSDP_NAME = "tabrasa_fsdp"
FSDP2_NAME = "tabrasa_fsdp2"
CPU_ALTERNATIVES = (
    f"--trainer.strategy ddp (every shipped config fits on one device) or --trainer.strategy {FSDP2_NAME} "
    f"(FSDP2, which runs on gloo)"
)

ShardingName = Literal["FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "NO_SHARD"]


class ShardedCheckpoints(Strategy):
    """What both sharded strategies change in Lightning's checkpoint handling: loading allows the numpy
    arrays of the saved RNG state (`rng_state_globals`), and removing a superseded checkpoint removes a
    sharded folder as well as a file (`remove_checkpoint_path`). First among the bases, so it overrides."""

    def load_checkpoint(self, checkpoint_path: _PATH, weights_only: bool | None = None) -> dict[str, Any]:
        with rng_state_globals():
            return super().load_checkpoint(checkpoint_path, weights_only=weights_only)

    def remove_checkpoint(self, filepath: _PATH) -> None:
        remove_checkpoint_path(self, filepath)


class TabrasaFSDPStrategy(ShardedCheckpoints, FSDPStrategy):
    """FSDP (torch FullyShardedDataParallel) wrapping each tabrasa block, on CUDA devices.

    state_dict_type: "sharded" (a folder, one shard file per rank) or "full" (one file, gathered on rank 0).
    activation_checkpointing: recompute each block's activations in the backward pass instead of storing
        them (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost"): activation memory of one
        block instead of all, for about one more forward pass of compute. Leave the backbone's own
        `config.checkpointing` off when this is on.
    sharding_strategy: torch's ShardingStrategy: "FULL_SHARD" (ZeRO-3), "SHARD_GRAD_OP" (ZeRO-2),
        "HYBRID_SHARD" (shard within a node, replicate across nodes), "NO_SHARD" (DDP-like).
    With `--trainer.precision bf16-mixed` Lightning gives FSDP bf16 parameters, gradients and buffers.
    """

    def __init__(
        self,
        state_dict_type: Literal["full", "sharded"] = "sharded",
        activation_checkpointing: bool = False,
        sharding_strategy: ShardingName = "FULL_SHARD",
        timeout: timedelta | None = default_pg_timeout,
    ) -> None:
        units = set(SHARD_UNITS)
        super().__init__(
            auto_wrap_policy=units,
            activation_checkpointing_policy=units if activation_checkpointing else None,
            state_dict_type=state_dict_type,
            sharding_strategy=sharding_strategy,
            timeout=timeout,
        )

    def setup_environment(self) -> None:
        # Lightning refuses the name "fsdp" on CPU but not an instance of a subclass; refuse here, before any
        # process group or model set-up, rather than fail somewhere inside torch's FSDP wrapper.
        if self.root_device.type != "cuda":
            raise UserError(fsdp_on_cpu_message(FSDP_NAME))
        check_checkpoint_io(self, full=self._state_dict_type == "full")
        super().setup_environment()


class FSDP2Strategy(ShardedCheckpoints, ModelParallelStrategy):
    """FSDP2 (torch `fully_shard`: per-parameter sharding over DTensors) of every tabrasa block, then of the
    rest of the task, over one data-parallel dimension of all ranks (no tensor parallelism). CUDA (nccl) or
    CPU (gloo). The task's `configure_model` applies it (`shard_blocks`).

    save_distributed_checkpoint: True writes a folder of per-rank shards; False one full file on rank 0.
    reshard_after_forward: free each block's gathered weights after its forward and gather them again for
        the backward (ZeRO-3, least memory); False keeps them until the backward (one all-gather fewer).
    Mixed precision: `--trainer.precision bf16-mixed` (autocast over fp32 shards). Activation
    checkpointing: the backbone's `config.checkpointing`.
    """

    def __init__(
        self,
        save_distributed_checkpoint: bool = True,
        reshard_after_forward: bool = True,
        process_group_backend: str | None = None,
        timeout: timedelta | None = default_pg_timeout,
    ) -> None:
        super().__init__(
            data_parallel_size="auto",
            tensor_parallel_size=1,
            save_distributed_checkpoint=save_distributed_checkpoint,
            process_group_backend=process_group_backend,
            timeout=timeout,
        )
        self.reshard_after_forward = reshard_after_forward

    def setup_environment(self) -> None:
        # ModelParallelStrategy's "auto" data-parallel size is the number of nodes (2-D parallelism, tensor
        # parallel inside a node); FSDP alone shards over every rank. The attribute is private, hence the
        # pin pytorch-lightning<2.7; the two-process tests in tests/training/test_sharding.py catch a move.
        self._data_parallel_size = self.num_nodes * self.num_processes
        check_checkpoint_io(self, full=not self._save_distributed_checkpoint)
        super().setup_environment()


# Names for `--trainer.strategy`, registered as Lightning registers its own strategies (on import; the task
# classes import this module, so the names exist before any Trainer is built from a tabrasa config).
for _name, _strategy, _description in (
    (FSDP_NAME, TabrasaFSDPStrategy, "FSDP with tabrasa's blocks as wrap units (CUDA)"),
    (FSDP2_NAME, FSDP2Strategy, "FSDP2 (fully_shard) of tabrasa's blocks (CUDA or CPU)"),
):
    if _name not in StrategyRegistry:
        StrategyRegistry.register(_name, _strategy, description=_description)


def shard_blocks(module: pl.LightningModule, forward_methods: Sequence[str] = ()) -> None:
    """Apply FSDP2 to every SHARD_UNITS module of `module`, then to `module` itself (what is left: embedder,
    positions, final norm, head), over the data-parallel mesh of the ModelParallelStrategy.

    For a task's `configure_model`: a no-op without a device mesh (any other strategy) and on a module
    already sharded (Lightning calls configure_model again for `test` after `fit`). forward_methods: the
    module's methods that compute without going through `forward` (a pretraining task's `step`): FSDP2
    gathers the root's own weights only around `forward` unless a method is registered with it.
    """
    fully_shard, fsdp_module = _fsdp2()
    mesh = module.device_mesh
    if mesh is None or isinstance(module, fsdp_module):
        return
    names = mesh.mesh_dim_names or ()
    if "tensor_parallel" in names and mesh["tensor_parallel"].size() != 1:
        raise UserError(
            f"shard_blocks shards over the data-parallel mesh only, but the strategy's tensor-parallel size "
            f"is {mesh['tensor_parallel'].size()}; use --trainer.strategy {FSDP2_NAME}"
        )
    data_parallel = mesh["data_parallel"] if "data_parallel" in names else mesh
    units = [m for m in module.modules() if isinstance(m, SHARD_UNITS)]
    if not units:
        raise UserError(
            f"{type(module).__name__} has no block to shard (none of {[c.__name__ for c in SHARD_UNITS]}); "
            f"train it with --trainer.strategy ddp"
        )
    strategy = module._trainer.strategy if module._trainer is not None else None
    reshard = getattr(strategy, "reshard_after_forward", True)
    for unit in units:
        fully_shard(unit, mesh=data_parallel, reshard_after_forward=reshard)
    # The root unit is needed again at once by the backward (the head runs last): resharding it after the
    # forward would only gather it a second time.
    fully_shard(module, mesh=data_parallel, reshard_after_forward=False)
    from torch.distributed.fsdp import register_fsdp_forward_method

    for name in forward_methods:
        register_fsdp_forward_method(module, name)


def reads_checkpoints_itself(strategy: object) -> bool:
    """Whether a --trainer.strategy value (name or instance) is one whose checkpoints Lightning reads back
    without the CheckpointIO plugin (FSDP, ModelParallel/FSDP2): the CLI must not install safetensors then."""
    if isinstance(strategy, str):
        strategy = StrategyRegistry[strategy]["strategy"] if strategy in StrategyRegistry else None
        return isinstance(strategy, type) and issubclass(strategy, FSDPStrategy | ModelParallelStrategy)
    return isinstance(strategy, FSDPStrategy | ModelParallelStrategy)


def check_checkpoint_io(strategy: Strategy, full: bool) -> None:
    """A full checkpoint is written through the CheckpointIO plugin but read back by Lightning's sharded
    strategies with torch.load: a safetensors plugin would write files the resume cannot read."""
    if full and isinstance(strategy.checkpoint_io, SafetensorsCheckpointIO):
        raise UserError(
            f"{type(strategy).__name__} with full checkpoints reads them back with torch.load, so it cannot "
            f"use SafetensorsCheckpointIO; drop that plugin (tabrasa.training.sharded_checkpoint."
            f"consolidate_checkpoint converts a checkpoint afterwards) or keep sharded checkpoints"
        )


def check_sharding_supported(strategy: object, accelerator: object) -> None:
    """Refuse FSDP without a CUDA accelerator, in one line naming what works on CPU, before the Trainer is
    built (Lightning's own refusal is a ValueError from inside the Trainer, shown with a traceback).

    strategy, accelerator: the values of --trainer.strategy and --trainer.accelerator as given (names or
    instances); "auto" means CUDA when a CUDA device is visible, as Lightning resolves it."""
    if isinstance(strategy, str):
        registered = StrategyRegistry[strategy]["strategy"] if strategy in StrategyRegistry else None
        fsdp = isinstance(registered, type) and issubclass(registered, FSDPStrategy)
    else:
        fsdp = isinstance(strategy, FSDPStrategy)
    if fsdp and not _is_cuda(accelerator):
        raise UserError(
            fsdp_on_cpu_message(strategy if isinstance(strategy, str) else type(strategy).__name__)
        )


def fsdp_on_cpu_message(strategy: str) -> str:
    return (
        f"--trainer.strategy {strategy} runs on CUDA devices only (Lightning's FSDP refuses a CPU "
        f"accelerator); on CPU use {CPU_ALTERNATIVES}"
    )


def _is_cuda(accelerator: object) -> bool:
    if isinstance(accelerator, CUDAAccelerator):
        return True
    if not isinstance(accelerator, str):
        return False
    name = accelerator.lower()
    return name in ("cuda", "gpu") or (name == "auto" and torch.cuda.is_available())


def _fsdp2() -> tuple[Any, type]:
    """torch's FSDP2 entry points: public in torch.distributed.fsdp since torch 2.6, before that under
    torch.distributed._composable.fsdp."""
    try:
        from torch.distributed.fsdp import FSDPModule, fully_shard
    except ImportError:  # torch 2.4, 2.5
        from torch.distributed._composable.fsdp import FSDPModule, fully_shard
    return fully_shard, FSDPModule
