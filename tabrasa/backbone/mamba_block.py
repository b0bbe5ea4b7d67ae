"""One Mamba layer (Gu & Dao 2023, Figure 3): RMSNorm → in_proj into (x, z) → causal depthwise conv → SiLU →
selective scan, gated by SiLU(z) → out_proj, added to the residual stream.

A bidirectional layer shares in_proj, the gate and out_proj between its two scans and gives each scan its
own conv, Δ/B/C projections, A and D, as Vision Mamba's "v2" block (Zhu et al. 2024) and mambapy's VMamba.
Parameter names follow the official `mamba_simple.Mamba` (conv1d, x_proj, dt_proj, A_log, D).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone.mamba_config import MambaConfig, ScanMode
from tabrasa.backbone.selective_scan import (
    ScanInputs,
    fused_kernel,
    fused_selective_scan,
    resolved_scan,
    selective_scan,
    step,
)
from tabrasa.backbone.sequence_lstm import gather_steps

# Mamba's initial step sizes: log-uniform in [DT_MIN, DT_MAX], at least DT_FLOOR (mamba_simple.py).
DT_MIN, DT_MAX, DT_FLOOR = 1e-3, 1e-1, 1e-4


class SelectiveSSM(nn.Module):
    """One scan direction over d_inner channels: (B, L, d_inner) → (B, L, d_inner), causal in L.

    real: (B, L) bool True at real tokens, which must form a prefix of each row (Mamba compacts rows so).
    Inputs at padding are zeroed before the convolution, and the scan's input and step size Δ are zeroed
    there, so the state passes padding unchanged (exp(0·A) = 1) and padding cannot reach a real token.
    """

    def __init__(self, d_inner: int, d_state: int, d_conv: int, dt_rank: int, conv_bias: bool) -> None:
        super().__init__()
        self.d_state, self.dt_rank = d_state, dt_rank
        self.conv1d = nn.Conv1d(
            d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1, bias=conv_bias
        )  # depthwise; the left padding makes it causal once the right end is cut
        self.x_proj = nn.Linear(d_inner, dt_rank + 2 * d_state, bias=False)  # → Δ (low rank), B, C
        self.dt_proj = nn.Linear(dt_rank, d_inner, bias=True)
        # S4D-Real initialisation A_n = -(n + 1) (Gu et al. 2022), stored as log so A stays negative.
        self.A_log = nn.Parameter(
            torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(d_inner, 1)
        )
        self.D = nn.Parameter(torch.ones(d_inner))  # the skip connection u → y
        self._init_dt()

    def _init_dt(self) -> None:
        """Δ = softplus(dt_proj(·)) starts log-uniform in [DT_MIN, DT_MAX]: the bias is softplus⁻¹ of it."""
        nn.init.uniform_(self.dt_proj.weight, -(self.dt_rank**-0.5), self.dt_rank**-0.5)
        log_dt = torch.rand(self.dt_proj.out_features) * (math.log(DT_MAX) - math.log(DT_MIN))
        dt = torch.exp(log_dt + math.log(DT_MIN)).clamp(min=DT_FLOOR)
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))

    def no_weight_decay(self) -> set[str]:
        """A_log is a matrix but a set of time constants, not a map; Mamba exempts it from decay."""
        return {"A_log"}

    def forward(
        self, x: torch.Tensor, real: torch.Tensor | None, mode: ScanMode, use_kernel: bool
    ) -> torch.Tensor:
        L = x.shape[1]
        if real is not None:
            x = x.masked_fill(~real[..., None], 0.0)
        u = F.silu(self.conv1d(x.transpose(1, 2))[..., :L].transpose(1, 2))  # (B, L, E)
        inputs = self._scan_inputs(u, real)
        mode = resolved_scan(mode, u.device)
        kernel = fused_kernel() if use_kernel and mode == "parallel" and u.is_cuda else None
        with torch.autocast(u.device.type, enabled=False):
            y = selective_scan(inputs, mode) if kernel is None else fused_selective_scan(kernel, inputs)
        return y.to(u.dtype)

    def _scan_inputs(self, u: torch.Tensor, real: torch.Tensor | None) -> ScanInputs:
        """u (..., E) → the scan's inputs, with u and Δ zeroed where `real` is False (None: nowhere)."""
        dt, B, C = self.x_proj(u).split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        if real is not None:
            u, delta = u.masked_fill(~real[..., None], 0.0), delta.masked_fill(~real[..., None], 0.0)
        # The scan runs in at least float32, as Mamba's kernels do: exp(ΔA) and long products in bf16 drift.
        dtype = torch.promote_types(u.dtype, torch.float32)
        return ScanInputs(*(t.to(dtype) for t in (u, delta, -torch.exp(self.A_log), B, C, self.D)))

    def step(
        self, x: torch.Tensor, window: torch.Tensor, h: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One token: x (B, E), window (B, E, d_conv - 1) the previous conv inputs, h (B, E, N) the state →
        (y (B, E), next window, next h)."""
        window = torch.cat([window, x[..., None]], dim=-1)  # (B, E, d_conv)
        u = torch.einsum("bek,ek->be", window, self.conv1d.weight[:, 0])
        if self.conv1d.bias is not None:
            u = u + self.conv1d.bias
        u = F.silu(u)
        y, h = step(h, self._scan_inputs(u, None))
        return y.to(u.dtype), window[..., 1:], h


class MambaMixer(nn.Module):
    """in_proj → (x, z); x through one scan, or two averaged; gated by SiLU(z); out_proj.

    reverse: (B, L) gather index reversing each row within its real length (an involution), so the reverse
    scan starts at the row's last real token and padding stays behind. The two directions are averaged, not
    summed (Vim's `if_divide_out`): the gated signal keeps the scale of one direction, so out_proj's
    initialisation and a one-direction checkpoint's out_proj keep their meaning.
    """

    def __init__(self, config: MambaConfig) -> None:
        super().__init__()
        c = config
        self.in_proj = nn.Linear(c.dim, 2 * c.d_inner, bias=c.bias)
        self.ssm = SelectiveSSM(c.d_inner, c.d_state, c.d_conv, c.rank, c.conv_bias)
        self.ssm_reverse = (
            SelectiveSSM(c.d_inner, c.d_state, c.d_conv, c.rank, c.conv_bias) if c.bidirectional else None
        )
        self.out_proj = nn.Linear(c.d_inner, c.dim, bias=c.bias)
        # GPT-2's scaled residual initialisation, as Mamba's `_init_weights(rescale_prenorm_residual=True)`.
        with torch.no_grad():
            self.out_proj.weight.div_(math.sqrt(c.depth))

    def forward(
        self,
        x: torch.Tensor,
        real: torch.Tensor | None,
        reverse: torch.Tensor,
        mode: ScanMode,
        use_kernel: bool,
    ) -> torch.Tensor:
        inner, z = self.in_proj(x).chunk(2, dim=-1)  # (B, L, E) each
        y = self.ssm(inner, real, mode, use_kernel)
        if self.ssm_reverse is not None:
            back = self.ssm_reverse(gather_steps(inner, reverse), real, mode, use_kernel)
            y = 0.5 * (y + gather_steps(back, reverse))
        return self.out_proj(y * F.silu(z))

    def step(
        self, x: torch.Tensor, window: torch.Tensor, h: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One token of the forward scan (a reverse scan needs the tokens still to come)."""
        inner, z = self.in_proj(x).chunk(2, dim=-1)  # (B, E) each
        y, window, h = self.ssm.step(inner, window, h)
        return self.out_proj(y * F.silu(z)), window, h


class MambaLayer(nn.Module):
    """x + dropout(mixer(RMSNorm(x))): Mamba's pre-norm residual block (mamba_simple.Block)."""

    def __init__(self, config: MambaConfig) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(config.dim, eps=config.norm_eps)
        self.mixer = MambaMixer(config)
        self.drop = nn.Dropout(config.dropout)

    def forward(
        self,
        x: torch.Tensor,
        real: torch.Tensor | None,
        reverse: torch.Tensor,
        mode: ScanMode = "auto",
        use_kernel: bool = True,
    ) -> torch.Tensor:
        return x + self.drop(self.mixer(self.norm(x), real, reverse, mode, use_kernel))

    def step(
        self, x: torch.Tensor, window: torch.Tensor, h: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        y, window, h = self.mixer.step(self.norm(x), window, h)
        return x + self.drop(y), window, h
