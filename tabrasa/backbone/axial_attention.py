"""Axial attention over grid-shaped tokens (Ho et al. 2019; Wang et al. 2020, Axial-DeepLab): each grid token
attends along its row, then along its column, so one layer reaches the whole grid at O(N·(H + W)) cost.

With one set of q, k, v per layer, the two passes are chained: the row pass mixes values within each row;
the column pass then mixes those row outputs within each column (CCNet's two-step criss-cross idea,
Huang et al. 2019), so token (i, j) receives Σ_i' a_col(i→i') Σ_j' a_row(j→j') v(i', j').

Prefix tokens (CLS, registers; TokenGrid.prefix) sit outside the grid. The choice made here: a prefix query
attends to every token (a (P, N) strip, linear in N), and every grid query sees the prefix keys in both
passes (with the prefix's own values), so a CLS token pools the whole grid and broadcasts back in one layer.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.sdpa import attend, attend_explicit
from tabrasa.backbone.tokens import TokenGrid


class AxialAttention(nn.Module):
    """Token mixer without parameters, so it loads the weights of a model trained with full attention."""

    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = dropout

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        # q, k, v: (B, H, N, hd) → (B, H, N, hd)
        return self._mix(q, k, v, mask, explicit=False)[0]

    def forward_with_weights(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` through explicit softmaxes, also returning the effective weights (B, H, N, N).

        Grid token (r, c) gives a_col(r→r') · a_row((r', c)→c') to value (r', c'), and to a prefix value p
        a_col(r→p) + Σ_r' a_col(r→r') · a_row((r', c)→p): the two passes multiplied out.
        """
        out, weights = self._mix(q, k, v, mask, explicit=True)
        assert weights is not None  # explicit=True always computes them
        return out, weights

    def _mix(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask, explicit: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        B, H, N, hd = q.shape
        grid = _check_grid(mask, N)
        P, R, C = grid.prefix, grid.height, grid.width
        valid = mask.key_mask  # (B, N) or None when every token is real
        row_ok = col_ok = None
        if valid is not None:
            prefix_ok, grid_ok = valid[:, None, :P], valid[:, P:].view(B, R, C)
            row_ok = torch.cat((prefix_ok.expand(B, R, P), grid_ok), dim=-1)  # (B, R, P+C)
            col_ok = torch.cat((prefix_ok.expand(B, C, P), grid_ok.transpose(1, 2)), dim=-1)  # (B, C, P+R)
        kp, vp = k[:, :, :P], v[:, :, :P]  # prefix keys and values (B, H, P, hd)
        qg, kg, vg = (t[:, :, P:].view(B, H, R, C, hd) for t in (q, k, v))
        rows, a_row = self._pass(qg, kg, vg, kp, vp, row_ok, explicit)  # (B, H, R, C, hd)
        # The column pass is the row pass on the transposed grid, mixing the row outputs.
        qt, kt, rt = qg.transpose(2, 3), kg.transpose(2, 3), rows.transpose(2, 3)
        cols, a_col = self._pass(qt, kt, rt, kp, vp, col_ok, explicit)
        out = cols.transpose(2, 3).reshape(B, H, R * C, hd)
        weights = None
        if a_row is not None and a_col is not None:
            weights = _chain(a_row, a_col.transpose(2, 3), P)  # (B, H, R*C, N)
        if P == 0:
            return out, weights
        allowed = None if valid is None else valid[:, None, None, :]  # (B, 1, 1, N)
        if weights is None:
            head = attend(q[:, :, :P], k, v, allowed=allowed, dropout=self._p())
            return torch.cat((head, out), dim=2), None
        # Prefix queries attend to every token: their weights are the plain softmax rows (B, H, P, N).
        head, head_weights = attend_explicit(q[:, :, :P], k, v, allowed=allowed, dropout=self._p())
        return torch.cat((head, out), dim=2), torch.cat((head_weights, weights), dim=2)

    def _p(self) -> float:
        return self.dropout if self.training else 0.0

    def _pass(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        kp: torch.Tensor,
        vp: torch.Tensor,
        key_ok: torch.Tensor | None,
        explicit: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attention within each row of (B, H, R, C, hd), each row also seeing the P prefix tokens.

        key_ok: (B, R, P+C), True at real keys, or None when every key is real. explicit: also return the
        weights (B, H, R, C, P+C) over each row's prefix then row keys.
        """
        B, H, R, C, hd = q.shape
        P = kp.shape[2]
        q, k, v = (t.transpose(1, 2).reshape(B * R, H, C, hd) for t in (q, k, v))  # (B*R, H, C, hd)
        if P:
            k = torch.cat((kp[:, None].expand(B, R, H, P, hd).reshape(B * R, H, P, hd), k), dim=2)
            v = torch.cat((vp[:, None].expand(B, R, H, P, hd).reshape(B * R, H, P, hd), v), dim=2)
        allowed = None
        if key_ok is not None:
            # A query sees itself even when padded, so no softmax row is empty (NaN); see masking.py.
            own = F.pad(torch.eye(C, dtype=torch.bool, device=q.device), (P, 0))  # (C, P+C)
            allowed = key_ok.reshape(B * R, 1, 1, P + C) | own  # (B*R, 1, C, P+C)
        weights = None
        if explicit:
            out, weights = attend_explicit(q, k, v, allowed=allowed, dropout=self._p())
            weights = weights.view(B, R, H, C, P + C).transpose(1, 2)  # (B, H, R, C, P+C)
        else:
            out = attend(q, k, v, allowed=allowed, dropout=self._p())
        return out.view(B, R, H, C, hd).transpose(1, 2), weights  # (B, H, R, C, hd)


def _chain(a_row: torch.Tensor, a_col: torch.Tensor, prefix_tokens: int) -> torch.Tensor:
    """Row-pass weights (B, H, R, C, P+C) and column-pass weights (B, H, R, C, P+R), both indexed by the
    query (r, c), multiplied out into the weights on the N = P + R·C input values: (B, H, R·C, N)."""
    B, H, R, C, _ = a_row.shape
    P = prefix_tokens
    # grid[b, h, r, c, r', c'] = a_col(r→r') at column c · a_row(c→c') at row r'
    grid = torch.einsum("bhrcs,bhscd->bhrcsd", a_col[..., P:], a_row[..., P:]).reshape(B, H, R * C, R * C)
    # The prefix reaches (r, c) directly in the column pass and through every row output it mixes.
    prefix = a_col[..., :P] + torch.einsum("bhrcs,bhscp->bhrcp", a_col[..., P:], a_row[..., :P])
    return torch.cat((prefix.reshape(B, H, R * C, P), grid), dim=-1)


def _check_grid(mask: AttentionMask, n: int) -> TokenGrid:
    if mask.causal:
        raise ValueError("axial attention has no token order to be causal in; use kind: full or local")
    grid = mask.grid
    if grid is None:
        raise ValueError(
            "axial attention needs the token grid: pass grid=TokenGrid(height, width, prefix) to the encoder "
            "(image and spectrogram embedders return one), or use kind: full or local for plain sequences"
        )
    if grid.prefix + grid.size != n:
        raise ValueError(
            f"axial attention got {n} tokens but the grid holds prefix {grid.prefix} + {grid.height}×"
            f"{grid.width} = {grid.prefix + grid.size}; pad inside the grid (mask False) rather than after it"
        )
    return grid
