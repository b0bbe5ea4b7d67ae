"""The Mamba backbone's configuration: shape, scan direction and execution path in one validated dataclass."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from tabrasa.backbone.config import check_choices

ScanMode = Literal["auto", "parallel", "sequential", "chunked"]


@dataclass
class MambaConfig:
    """Shape and switches of the selective state-space backbone (Gu & Dao 2023, "Mamba").

    dim, depth: token width and number of residual Mamba layers.
    d_state: N, the state size of each channel's scan (16 in Mamba).
    d_conv: width of the causal depthwise convolution before the scan (4 in Mamba).
    expand: the scan runs over d_inner = expand * dim channels.
    dt_rank: rank of the projection that makes the step size Δ; "auto" = ceil(dim / 16), as Mamba.
    bidirectional: add a second scan over each sequence reversed within its real length and average the
        two (Vision Mamba, Zhu et al. 2024; Caduceus, Schiff et al. 2024); False = causal, streamable.
    dropout: on each layer's mixer output before the residual sum (Mamba itself uses none).
    scan: "parallel" (an O(log L)-depth associative scan), "sequential" (the step-by-step recurrence that
        stores every state, the reference), "chunked" (the same recurrence in time chunks, states
        recomputed in the backward pass: chunked_scan.py) or "auto": chunked on the CPU, parallel
        elsewhere. All compute the same outputs. On one CPU thread the scan's depth buys nothing and its
        (B, L, E, N) tensors cost memory passes, so the chunked loop trains a Mamba backbone fastest from
        about a hundred tokens on (benchmarks/bench_mamba_scan.py, results/mixers/mamba_scan*.json).
    cuda_kernel: on CUDA with `mamba_ssm` installed, run the parallel scan with its fused kernel.
    norm_eps: epsilon of every RMSNorm. final_norm: an RMSNorm after the last layer (Mamba's `norm_f`;
        the pre-norm residual stream is otherwise unnormalised).
    bias: biases in the input and output projections. conv_bias: a bias in the depthwise convolution.
    """

    dim: int = 128
    depth: int = 2
    d_state: int = 16
    d_conv: int = 4
    expand: int = 2
    dt_rank: int | Literal["auto"] = "auto"
    bidirectional: bool = True
    dropout: float = 0.1
    scan: ScanMode = "auto"
    cuda_kernel: bool = True
    norm_eps: float = 1e-5
    final_norm: bool = True
    bias: bool = False
    conv_bias: bool = True

    def __post_init__(self) -> None:
        check_choices(self, "MambaConfig.")
        for name in ("dim", "depth", "d_state", "d_conv", "expand"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"MambaConfig.{name}={value!r} must be an integer >= 1")
        rank = self.dt_rank
        if rank != "auto" and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 1):
            raise ValueError(
                f"MambaConfig.dt_rank={rank!r} must be 'auto' (ceil(dim / 16)) or an integer >= 1"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"MambaConfig.dropout={self.dropout} must be in [0, 1)")
        if not (math.isfinite(self.norm_eps) and self.norm_eps > 0):
            raise ValueError(f"MambaConfig.norm_eps={self.norm_eps} must be a finite value > 0, e.g. 1e-5")

    @property
    def d_inner(self) -> int:
        return self.expand * self.dim

    @property
    def rank(self) -> int:
        """dt_rank with "auto" resolved."""
        return math.ceil(self.dim / 16) if self.dt_rank == "auto" else int(self.dt_rank)

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    def state_size(self) -> int:
        """Numbers a scan carries per sequence, all layers and directions: each channel's d_state-wide SSM
        state plus the last d_conv - 1 inputs of its convolution. It does not grow with the sequence, where
        attention's key/value cache holds 2 * dim * depth numbers per token seen."""
        per_direction = self.d_inner * (self.d_state + self.d_conv - 1)
        return self.depth * self.directions * per_direction
