"""The selective scan's recurrence without its (B, L, E, N) tensors: time chunks, states recomputed backwards.

`selective_scan` materialises exp(ΔA), ΔBu and every state h_t, each (B, L, E, N), and autograd keeps
one (B, E, N) tensor per step besides. At the IMDB preset's shape (B 32, L 256, E 256, N 16) each of those
is 134 MB, so a training step is a dozen passes over memory that does not fit in cache, and a CPU, which
has no lanes to spend on the parallel scan, waits on memory. mamba_ssm's CUDA kernel avoids this by fusing
the scan; no CPU kernel exists, so this is written here: an autograd Function over chunks of `chunk`
steps that keeps only the state at each chunk's start. The forward pass loops over time inside a chunk
(one addcmul a step, nothing recorded), the backward pass recomputes the chunk's states from its start
and runs the adjoint recurrence G_t = ∂y_t/∂h_t + exp(Δ_{t+1}A) G_{t+1} backwards (one addcmul a step);
every gradient is then a vectorised reduction over the chunk. Outputs and gradients equal the reference
`sequential_scan` path to float rounding (tests/backbone/test_chunked_scan.py).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.autograd.function import once_differentiable

# 1 MiB of float32 per (chunk, B, E, N) buffer, a core's L2 cache on the 2-core machine the curves run on.
# Measured, not guessed: against 8 MiB (the first choice) a scan's forward + backward runs 1.6× faster at the
# image curves' shape, 1.4× at the text curves' and about 1.1× at the audio curves' and the IMDB preset's
# (results/mixers/scan_chunk.json, written by benchmarks/bench_scan_chunk.py beside two training lanes).
CHUNK_ELEMENTS = 1 << 18


def chunk_length(batch: int, channels: int, state: int, length: int, elements: int = CHUNK_ELEMENTS) -> int:
    """Steps per chunk: as many as keep one (chunk, B, E, N) buffer near `elements` numbers, at least 1."""
    return max(1, min(length, elements // max(1, batch * channels * state)))


def discretized(
    u: torch.Tensor, delta: torch.Tensor, a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """exp(ΔA) and ΔBu, both (..., E, N), for u, Δ (..., E), A (E, N) and B (..., N): Mamba's zero-order
    hold for A and Euler step for B. Any leading dimensions: a whole sequence, a chunk, one step."""
    decay = torch.mul(delta[..., None], a).exp_()
    drive = (delta * u)[..., None] * b[..., None, :]
    return decay, drive


def _run_states(decay: torch.Tensor, drive: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """h_t = decay_t h_{t-1} + drive_t from state h over the chunk → every state (T, B, E, N)."""
    # in place: drive_t is read once, by the step that overwrites it (a chunk-sized buffer fewer to fault in)
    for t in range(drive.shape[0]):
        h = torch.addcmul(drive[t], decay[t], h, out=drive[t])
    return drive


class _ChunkedScan(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        u: torch.Tensor,
        delta: torch.Tensor,
        a: torch.Tensor,
        b: torch.Tensor,
        c: torch.Tensor,
        chunk: int,
    ) -> torch.Tensor:
        # time-major copies: a step is then one contiguous (B, E, N) slice
        u_t, delta_t, b_t, c_t = (x.transpose(0, 1).contiguous() for x in (u, delta, b, c))
        L, B, E = u_t.shape
        h = u.new_zeros(B, E, a.shape[1])
        starts, outputs = [], []
        for s in range(0, L, chunk):
            part = slice(s, s + chunk)
            starts.append(h)
            decay, drive = discretized(u_t[part], delta_t[part], a, b_t[part])
            states = _run_states(decay, drive, h)
            h = states[-1].clone()  # not a view: it would keep the whole chunk alive
            outputs.append(torch.matmul(states, c_t[part, :, :, None]).squeeze(-1))  # Σ_n C h, no temporary
        ctx.chunk = chunk
        ctx.save_for_backward(u_t, delta_t, a, b_t, c_t, torch.stack(starts))
        return torch.cat(outputs).transpose(0, 1)  # (B, L, E)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_y: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        u_t, delta_t, a, b_t, c_t, starts = ctx.saved_tensors
        chunk = ctx.chunk
        gy_t = grad_y.transpose(0, 1)  # (L, B, E)
        L = u_t.shape[0]
        grad_u, grad_delta = torch.empty_like(u_t), torch.empty_like(delta_t)
        grad_b, grad_c = torch.empty_like(b_t), torch.empty_like(c_t)
        grad_a = torch.zeros_like(a)
        carry = torch.zeros_like(starts[0])  # exp(Δ_{t+1}A) G_{t+1}, flowing back into step t
        ones = a.new_ones(a.shape[1], 1)  # sums over the state axis, as a matrix product
        for index in reversed(range(len(starts))):
            s = index * chunk
            part = slice(s, min(s + chunk, L))
            u, delta, b, c, gy = u_t[part], delta_t[part], b_t[part], c_t[part], gy_t[part]
            decay, drive = discretized(u, delta, a, b)
            states = _run_states(decay, drive, starts[index])
            grad_c[part] = torch.matmul(gy[:, :, None, :], states).squeeze(2)  # Σ_e ∂y/∂C
            total = torch.empty_like(states)  # G_t = ∂y_t/∂h_t + exp(Δ_{t+1}A) G_{t+1}
            for t in reversed(range(total.shape[0])):
                torch.addcmul(carry, gy[t, :, :, None], c[t, :, None, :], out=total[t])
                carry = total[t] * decay[t]
            # decay becomes ∂L/∂(Δ_t A) = G_t · h_{t-1} · exp(Δ_t A), in place: h_{-1} is the chunk's start
            decay[1:] *= states[:-1]
            decay[0] *= starts[index]
            grad_log_decay = decay.mul_(total)
            total_b = torch.matmul(total, b[..., None]).squeeze(-1)  # Σ_n G B: (T, B, E)
            grad_u[part] = delta * total_b
            grad_a += (grad_log_decay * delta[..., None]).sum((0, 1))  # einsum's permuted bmm is 20× slower
            # Σ_n ∂L/∂(ΔA)·A, the sum as a product with ones: a sum over the last 16 is 3× slower on the CPU
            grad_delta[part] = u * total_b + torch.matmul(grad_log_decay.mul_(a), ones).squeeze(-1)
            grad_b[part] = torch.matmul((delta * u)[:, :, None, :], total).squeeze(2)  # Σ_e G Δu
        swap = (g.transpose(0, 1) for g in (grad_u, grad_delta, grad_b, grad_c))
        gu, gd, gb, gc = swap
        return gu, gd, grad_a, gb, gc, None


def chunked_scan(
    u: torch.Tensor,
    delta: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    c: torch.Tensor,
    chunk: int | None = None,
) -> torch.Tensor:
    """Σ_n C_t h_t for h_t = exp(Δ_t A) h_{t-1} + Δ_t B_t u_t (h_{-1} = 0): u, Δ (B, L, E), A (E, N),
    B, C (B, L, N) → (B, L, E), without the D skip. chunk: steps a chunk (None: `chunk_length`)."""
    if chunk is None:
        chunk = chunk_length(u.shape[0], u.shape[2], a.shape[1], u.shape[1])
    if chunk < 1:
        raise ValueError(f"chunked_scan chunk={chunk} must be >= 1 (steps kept per chunk)")
    return _ChunkedScan.apply(u, delta, a, b, c, chunk)  # type: ignore[no-any-return]
