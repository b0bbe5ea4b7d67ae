"""Which kernel computes softmax(QKᵀ/√d)·V: torch's fused SDPA, or, when switched on, plain batched matmuls on
CPU in bf16/fp16 for short key sequences. Off by default (`use_matmul_attention(0)`).

Why it exists (scripts/bench_throughput.py profile, AVX-512-BF16 CPU, 2 threads, dim 384, 6 heads): in bf16
training the fused CPU kernel runs no faster than in fp32 (about 100 GFLOP/s) and takes 35% of the step at
196 tokens and 47% at 512, while bf16 GEMMs reach about 800 GFLOP/s. Measured so far: at 196 tokens × 16 the
matmul path made a whole bf16 training step 1.21× faster than timm's with the same autocast (one clean run);
one attention layer alone (fwd + bwd, contiguous inputs) was 14% faster at 196 tokens but 49% slower at 512
and 2.3× slower at 1,024, with about 3× the bf16 error (scores are rounded to bf16 before the fp32 softmax,
as in the unfused paths of timm and Hugging Face). Hence a switch with a key-length limit, not a default.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tabrasa.backbone.full_attention import FullAttention as _FusedFullAttention
from tabrasa.backbone.masking import AttentionMask

_matmul_max_keys = 0  # longest key sequence for the matmul path; 0 = never (scores grow as Nq·Nk)


def use_matmul_attention(max_keys: int) -> None:
    """Route CPU bf16/fp16 attention over at most `max_keys` keys through batched matmuls (0 turns it off)."""
    global _matmul_max_keys
    if max_keys < 0:
        raise ValueError(f"max_keys={max_keys} must be >= 0 (0 turns the matmul path off)")
    _matmul_max_keys = max_keys


def uses_matmul_path(q: torch.Tensor, k: torch.Tensor) -> bool:
    low_precision = q.dtype in (torch.bfloat16, torch.float16)
    return q.device.type == "cpu" and low_precision and k.shape[-2] <= _matmul_max_keys


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
) -> torch.Tensor:
    """Drop-in for F.scaled_dot_product_attention (bool masks: True = may attend); (..., Nq, hd) out."""
    if not uses_matmul_path(q, k):
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal
        )
    scores = (q * q.shape[-1] ** -0.5) @ k.transpose(-2, -1)  # (..., Nq, Nk)
    if is_causal:
        n, m = scores.shape[-2:]
        attn_mask = torch.ones(n, m, dtype=torch.bool, device=q.device).tril()
    if attn_mask is not None:
        scores = (
            scores.masked_fill(~attn_mask, float("-inf"))
            if attn_mask.dtype == torch.bool
            else scores + attn_mask
        )
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
    if dropout_p:
        probs = F.dropout(probs, dropout_p)
    return probs.to(v.dtype) @ v


class FullAttention(_FusedFullAttention):
    """Full attention through `attention`: the same module and (no) weights, the faster kernel per case."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        # q, k, v: (B, H, N, hd) → (B, H, N, hd)
        return attention(
            q,
            k,
            v,
            attn_mask=mask.sdpa_mask(q.shape[-2], q.device),
            dropout_p=self.dropout if self.training else 0.0,
            is_causal=mask.sdpa_is_causal,
        )
