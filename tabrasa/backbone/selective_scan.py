"""The selective scan of Mamba (Gu & Dao 2023, Algorithm 2), in pure PyTorch and through mamba_ssm's kernel.

With step sizes Δ, a diagonal A < 0 and input-dependent B, C (discretised as Mamba's reference
`selective_scan_ref`: zero-order hold for A, Euler for B):

    h_t = exp(Δ_t A) h_{t-1} + Δ_t B_t u_t,    y_t = C_t · h_t + D u_t,    h_{-1} = 0.

The first line is the linear recurrence h_t = a_t h_{t-1} + x_t, which `parallel_scan` solves in
O(log L) sequential depth and `sequential_scan` solves one step at a time (the reference; `step` is one
of its steps, for streaming); `chunked_scan` (chunked_scan.py) runs the same steps without storing the
(B, L, E, N) tensors, the CPU's path. mambapy's `pscan` solves it too, but pads every length to the next
power of two and is a reference package, not a dependency of the backbone; the odd/even scan below takes
any length.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch.autograd.function import once_differentiable

from tabrasa.backbone.chunked_scan import chunked_scan, discretized
from tabrasa.backbone.mamba_config import ScanMode


def _odd_even_scan(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """h_t = a_t h_{t-1} + x_t along dim 1 with h_{-1} = 0, for a, x (B, L, ...).

    Work-efficient and of O(log L) depth (Blelloch 1990, "Prefix sums and their applications"): compose
    each pair of steps (2i, 2i+1) into one, solve the half-length recurrence for the odd positions, then
    fill in each even position from its odd predecessor. Out of place, any L.
    """
    L = x.shape[1]
    if L == 1:
        return x
    a_even, a_odd = a[:, 0::2], a[:, 1::2]  # (B, ceil(L/2), ...), (B, floor(L/2), ...)
    x_even, x_odd = x[:, 0::2], x[:, 1::2]
    pairs = a_odd.shape[1]
    # h_{2i+1} = a_{2i+1} a_{2i} h_{2i-1} + (a_{2i+1} x_{2i} + x_{2i+1})
    h_odd = _odd_even_scan(a_odd * a_even[:, :pairs], torch.addcmul(x_odd, a_odd, x_even[:, :pairs]))
    # h_{2i} = a_{2i} h_{2i-1} + x_{2i}; h_0 = x_0
    rest = torch.addcmul(x_even[:, 1:], a_even[:, 1:], h_odd[:, : x_even.shape[1] - 1])
    h_even = torch.cat([x_even[:, :1], rest], dim=1)
    h = torch.stack([h_even[:, :pairs], h_odd], dim=2).flatten(1, 2)  # interleave: (B, 2*pairs, ...)
    return h if L % 2 == 0 else torch.cat([h, h_even[:, pairs:]], dim=1)


class _ParallelScan(torch.autograd.Function):
    """The odd/even scan with its gradient as the same scan run backwards in time (Martin & Cundy 2018,
    "Parallelizing linear recurrent neural nets over sequence length"), so the backward pass keeps a and h
    only, not the log L levels of intermediate tensors autograd would record."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        h = _odd_even_scan(a, x)
        ctx.save_for_backward(a, h)
        return h

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, h = ctx.saved_tensors
        # Each h_t feeds h_{t+1} through a_{t+1}: g_t = grad_h_t + a_{t+1} g_{t+1}, a recurrence in reverse.
        a_next = torch.cat([a[:, 1:], torch.zeros_like(a[:, :1])], dim=1)
        g = _odd_even_scan(a_next.flip(1), grad_h.flip(1)).flip(1)
        h_prev = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)
        return g * h_prev, g


def parallel_scan(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """h_t = a_t h_{t-1} + x_t along dim 1 (h_{-1} = 0) for a, x (B, L, ...), in O(log L) depth."""
    return _ParallelScan.apply(a, x)


def sequential_scan(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The same recurrence one step at a time: the reference the parallel scan is tested against."""
    h = torch.zeros_like(x[:, 0])
    states = []
    # unbind, not x[:, t]: the backward of each index would write a zero tensor of the full (B, L, ...) size
    for a_t, x_t in zip(a.unbind(1), x.unbind(1), strict=True):
        h = torch.addcmul(x_t, a_t, h)
        states.append(h)
    return torch.stack(states, dim=1)


class ScanInputs(NamedTuple):
    """The paper's u, Δ (> 0, softplus applied), A, B, C, D, passed as lowercase a, b, c, d: over a sequence
    u, Δ (B, L, E) and B, C (B, L, N); over one time step u, Δ (B, E) and B, C (B, N); A (E, N), D (E)."""

    u: torch.Tensor
    delta: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    c: torch.Tensor
    d: torch.Tensor


def discretize(inputs: ScanInputs) -> tuple[torch.Tensor, torch.Tensor]:
    """exp(Δ A) and Δ B u, both (..., E, N)."""
    return discretized(inputs.u, inputs.delta, inputs.a, inputs.b)


def resolved_scan(mode: ScanMode, device: torch.device) -> ScanMode:
    """ "auto" → "chunked" on the CPU, "parallel" on an accelerator; an explicit mode stays as it is."""
    if mode != "auto":
        return mode
    return "chunked" if device.type == "cpu" else "parallel"


def selective_scan(inputs: ScanInputs, mode: ScanMode = "auto") -> torch.Tensor:
    """Over a sequence (B, L, ·) → y (B, L, E)."""
    mode = resolved_scan(mode, inputs.u.device)
    if mode == "chunked" and (torch.jit.is_tracing() or torch.onnx.is_in_onnx_export()):
        mode = "sequential"  # the tracer cannot record the chunked scan's autograd.Function; the loop traces
    if mode == "chunked":
        u, delta, a, b, c, d = inputs
        return chunked_scan(u, delta, a, b, c) + d * u
    decay, drive = discretize(inputs)  # (B, L, E, N) each
    h = parallel_scan(decay, drive) if mode == "parallel" else sequential_scan(decay, drive)
    return torch.einsum("blen,bln->ble", h, inputs.c) + inputs.d * inputs.u


def step(h: torch.Tensor, inputs: ScanInputs) -> tuple[torch.Tensor, torch.Tensor]:
    """One time step from state h (B, E, N) → (y (B, E), next h)."""
    decay, drive = discretize(inputs)
    h = torch.addcmul(drive, decay, h)
    return torch.einsum("ben,bn->be", h, inputs.c) + inputs.d * inputs.u, h


@functools.cache
def fused_kernel() -> Callable[..., torch.Tensor] | None:
    """mamba_ssm's CUDA `selective_scan_fn` (the official fused kernel), or None where it is not installed."""
    try:
        from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
    except ImportError:
        return None
    return selective_scan_fn  # type: ignore[no-any-return]


def fused_selective_scan(kernel: Callable[..., torch.Tensor], inputs: ScanInputs) -> torch.Tensor:
    """`selective_scan` through mamba_ssm's kernel, which takes channels before time: (B, E, L), (B, N, L).
    Δ arrives with softplus applied (and zeroed at padding), so the kernel's own softplus stays off."""
    u, delta, a, b, c, d = inputs
    y = kernel(
        u.transpose(1, 2).contiguous(),
        delta.transpose(1, 2).contiguous(),
        a.contiguous(),
        b.transpose(1, 2).contiguous(),
        c.transpose(1, 2).contiguous(),
        d.contiguous(),
        delta_softplus=False,
    )
    return y.transpose(1, 2)  # (B, L, E)
