"""A selective state-space backbone: a stack of Mamba layers (Gu & Dao 2023), bidirectional for encoders.

Behind the Encoder contract, so only the inductive bias changes: tokens are mixed by input-dependent linear
recurrences, in time linear in the sequence length and with a state that does not grow with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from tabrasa.backbone.configured import ConfiguredBackbone
from tabrasa.backbone.mamba_block import MambaLayer
from tabrasa.backbone.mamba_config import MambaConfig
from tabrasa.backbone.protocol import check_tokens
from tabrasa.backbone.sequence_lstm import gather_steps, reversal_index
from tabrasa.backbone.tokens import TokenGrid


@dataclass
class MambaState:
    """What a causal Mamba carries between tokens, per layer: the last d_conv - 1 inputs of its convolution
    (B, d_inner, d_conv - 1) and its scan state (B, d_inner, d_state)."""

    windows: list[torch.Tensor]
    states: list[torch.Tensor]

    def numel(self) -> int:
        return sum(t.numel() for t in (*self.windows, *self.states))


class Mamba(ConfiguredBackbone[MambaConfig]):
    """Mamba backbone. `mamba(x, mask)`: x float (B, N, D), mask bool (B, N) True at real tokens (None =
    all real) → (B, N, D), zero at padding positions.

    Padding never changes a real token's output, wherever it lies: each row's real tokens are first
    gathered to its front in order, the forward scan is causal, and the reverse scan runs over the row
    reversed within its real length, so both only ever read real tokens; outputs go back in place.

    State-dict names: layers.{i}.norm.weight, layers.{i}.mixer.in_proj.*, layers.{i}.mixer.ssm.{conv1d.*,
    x_proj.weight, dt_proj.*, A_log, D}, layers.{i}.mixer.ssm_reverse.* (bidirectional only),
    layers.{i}.mixer.out_proj.*, norm.weight (final_norm only).
    """

    def __init__(self, config: MambaConfig) -> None:
        super().__init__(config, MambaConfig)
        c = self.config
        self.layers = nn.ModuleList(MambaLayer(c) for _ in range(c.depth))
        self.norm = nn.RMSNorm(c.dim, eps=c.norm_eps) if c.final_norm else nn.Identity()

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        """grid is accepted for the Backbone contract and unused: the scan reads tokens in sequence order."""
        self._check_inputs(x, mask)
        B, N, _ = x.shape
        real, order = None, None
        lengths = torch.full((B,), N, device=x.device)
        if mask is not None:
            # A stable sort puts each row's real tokens first, in their order: padding becomes a suffix.
            order = torch.argsort((~mask).to(torch.int8), dim=1, stable=True)  # (B, N)
            lengths = mask.sum(dim=1)
            real = torch.arange(N, device=x.device)[None] < lengths[:, None]  # (B, N), a prefix per row
            x = gather_steps(x, order).masked_fill(~real[..., None], 0.0)
        reverse = reversal_index(lengths, N, x.device)  # (B, N), shared by every layer
        for layer in self.layers:
            x = layer(x, real, reverse, self.config.scan, self.config.cuda_kernel)
        x = self.norm(x)
        if order is None:
            return x
        x = gather_steps(x, torch.argsort(order, dim=1))  # back to the input's token order
        return x.masked_fill(~mask[..., None], 0.0)

    def init_state(
        self, batch: int, device: torch.device | None = None, dtype: torch.dtype | None = None
    ) -> MambaState:
        """The zero state before the first token, for `step`."""
        self._require_causal()
        c = self.config
        weights = next(self.parameters())
        device = weights.device if device is None else device
        dtype = torch.promote_types(weights.dtype if dtype is None else dtype, torch.float32)
        return MambaState(
            windows=[
                torch.zeros(batch, c.d_inner, c.d_conv - 1, device=device, dtype=dtype) for _ in self.layers
            ],
            states=[
                torch.zeros(batch, c.d_inner, c.d_state, device=device, dtype=dtype) for _ in self.layers
            ],
        )

    def step(self, state: MambaState, x: torch.Tensor) -> tuple[torch.Tensor, MambaState]:
        """Streaming inference: one token per row, x (B, D) → (output (B, D), next state). Feeding tokens
        0..t one at a time gives forward(x)[:, t], in constant time and memory per token."""
        self._require_causal()
        windows, states = [], []
        for layer, window, h in zip(self.layers, state.windows, state.states, strict=True):
            x, window, h = layer.step(x, window.to(x.dtype), h)
            windows.append(window)
            states.append(h)
        return self.norm(x), MambaState(windows, states)

    def state_size(self) -> int:
        """Numbers of recurrent state per sequence (see MambaConfig.state_size)."""
        return self.config.state_size()

    def _require_causal(self) -> None:
        if self.config.bidirectional:
            raise ValueError(
                "Mamba.step streams one token at a time, but bidirectional=True needs the tokens still to "
                "come for its reverse scan; build the model with bidirectional: false to stream"
            )

    def _check_inputs(self, x: torch.Tensor, mask: torch.Tensor | None) -> None:
        check_tokens("Mamba", x, mask, self.dim)
