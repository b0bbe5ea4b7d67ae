"""Sliding-window attention with optional global tokens (Longformer, Beltagy et al. 2020; BigBird, Zaheer
et al. 2020), computed blockwise so that time and memory grow linearly with the sequence length.

Each query sees the keys at most `window` positions away. The sequence is cut into blocks of `window`
queries; the band of block i lies inside blocks i-1, i and i+1, so each block attends to those three blocks,
gathered once as (B, nb, H, 3w, hd). Scores are (w, 3w) per block: never an N×N matrix. The first
`global_tokens` tokens (CLS and friends) attend to every token and every token attends to them, as in
Longformer's global attention; with those, a (g, N) strip of scores is added, still linear in N.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.sdpa import attend, attend_explicit


class LocalAttention(nn.Module):
    """Token mixer without parameters, so it loads the weights of a model trained with full attention."""

    def __init__(self, window: int, global_tokens: int = 0, dropout: float = 0.0) -> None:
        super().__init__()
        if window < 1 or global_tokens < 0:
            raise ValueError(
                f"local attention needs window >= 1 and global_tokens >= 0, got {window} and {global_tokens}"
            )
        self.window = window
        self.global_tokens = global_tokens
        self.dropout = dropout

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        # q, k, v: (B, H, N, hd) → (B, H, N, hd)
        B, _, N, _ = q.shape
        valid = mask.key_mask if mask.key_mask is not None else q.new_ones(B, N, dtype=torch.bool)
        out = self._banded(q, k, v, valid, mask.causal)
        g = min(self.global_tokens, N)
        if g == 0:
            return out
        # Global queries see every key: a (B, H, g, N) strip of scores.
        query_pos = torch.arange(g, device=q.device)[:, None]
        key_pos = torch.arange(N, device=q.device)[None, :]
        allowed = _allowed(valid[:, None, None, :], query_pos, key_pos, mask.causal)  # (B, 1, g, N)
        head = attend(q[:, :, :g], k, v, allowed=allowed, dropout=self._p())
        return torch.cat((head, out[:, :, g:]), dim=2)

    def forward_with_weights(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` with the band written out as one dense (N, N) mask, also returning the weights
        (B, H, N, N): O(N²), for inspecting short inputs. The same rules as the blockwise path: global
        tokens see and are seen by every token, a query always sees itself."""
        B, _, N, _ = q.shape
        valid = mask.key_mask if mask.key_mask is not None else q.new_ones(B, N, dtype=torch.bool)
        pos = torch.arange(N, device=q.device)
        g = min(self.global_tokens, N)
        near = (pos[:, None] - pos[None, :]).abs() <= self.window  # (N, N)
        near = near | (pos[:, None] < g) | (pos[None, :] < g)
        allowed = _allowed(valid[:, None, None, :] & near, pos[:, None], pos[None, :], mask.causal)
        return attend_explicit(q, k, v, allowed=allowed, dropout=self._p())  # allowed: (B, 1, N, N)

    def _p(self) -> float:
        return self.dropout if self.training else 0.0

    def _banded(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, valid: torch.Tensor, causal: bool
    ) -> torch.Tensor:
        B, H, N, hd = q.shape
        w = min(self.window, N)  # block size; a window wider than the sequence needs a single block
        nb = -(-N // w)
        g = min(self.global_tokens, N)
        qb = F.pad(q, (0, 0, 0, nb * w - N)).view(B, H, nb, w, hd).transpose(1, 2)  # (B, nb, H, w, hd)
        kb, vb = _neighbour_blocks(k, w, nb), _neighbour_blocks(v, w, nb)  # (B, nb, H, 3w, hd)
        query_pos = torch.arange(nb * w, device=q.device).view(nb, w, 1)
        key_pos = torch.arange(-w, (nb + 1) * w, device=q.device).unfold(0, 3 * w, w)[:, None, :]  # (nb,1,3w)
        key_ok = _neighbour_blocks(valid[:, None, :, None], w, nb)[:, :, 0, None, :, 0]  # (B, nb, 1, 3w)
        # Global keys are prepended to every block below, so they are masked here to count once.
        key_ok = key_ok & (key_pos >= g) & (key_pos < N)
        near = (key_pos - query_pos).abs() <= self.window
        allowed = _allowed(key_ok & near, query_pos, key_pos, causal)  # (B, nb, w, 3w)
        if g:
            global_ok = _allowed(
                valid[:, None, None, :g], query_pos, torch.arange(g, device=q.device), causal
            )
            allowed = torch.cat((global_ok.expand(B, nb, w, g), allowed), dim=-1)  # (B, nb, w, g+3w)
            kb = torch.cat((k[:, None, :, :g].expand(B, nb, H, g, hd), kb), dim=3)  # (B, nb, H, g+3w, hd)
            vb = torch.cat((v[:, None, :, :g].expand(B, nb, H, g, hd), vb), dim=3)
        out = attend(
            qb.reshape(B * nb, H, w, hd),
            kb.reshape(B * nb, H, -1, hd),
            vb.reshape(B * nb, H, -1, hd),
            allowed=allowed.reshape(B * nb, 1, w, -1),
            dropout=self._p(),
        )  # (B*nb, H, w, hd)
        return out.view(B, nb, H, w, hd).transpose(1, 2).reshape(B, H, nb * w, hd)[:, :, :N]


def _allowed(
    key_ok: torch.Tensor, query_pos: torch.Tensor, key_pos: torch.Tensor, causal: bool
) -> torch.Tensor:
    """Which (query, key) pairs may attend, from positions broadcast against each other.

    A query always sees itself: a padded query far from any real token would otherwise have an empty
    softmax row, which is NaN, and NaN poisons the batch's gradients. Real queries see themselves anyway.
    """
    if causal:
        key_ok = key_ok & (key_pos <= query_pos)
    return key_ok | (key_pos == query_pos)


def _neighbour_blocks(x: torch.Tensor, w: int, nb: int) -> torch.Tensor:
    """(B, H, N, d) → (B, nb, H, 3w, d): for block i, blocks i-1, i and i+1 (zeros past either end)."""
    B, H, N, d = x.shape
    x = F.pad(x, (0, 0, w, (nb + 1) * w - N))  # (B, H, (nb+2)w, d)
    x = x.view(B, H, nb + 2, w, d).transpose(1, 2)  # (B, nb+2, H, w, d)
    return torch.cat((x[:, :-2], x[:, 1:-1], x[:, 2:]), dim=3)  # (B, nb, H, 3w, d)
