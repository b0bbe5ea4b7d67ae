"""Low-rank attention (Linformer, Wang et al. 2020): keys and values are projected along the sequence to
`rank` rows, so the scores are (N, rank) instead of (N, N) and cost grows linearly with N.

softmax(Q (E K)ᵀ / √d) · (F V), with E, F learned (rank, max_len) matrices shared by the heads of one layer
(Linformer's headwise sharing). A shorter input uses the first N columns, which equals zero-padding it to
max_len; padded keys and values are zeroed first, so right padding never changes the real tokens' outputs.
"""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.sdpa import attend, attend_explicit


class LowRankAttention(nn.Module):
    """Token mixer with two parameters, `key_proj` (E) and `value_proj` (F), each (rank, max_len).

    In a model they are named blocks.{i}.attn.mixer.key_proj / value_proj, so every other weight keeps its
    name and a model trained with full attention loads with only these reported missing.
    """

    def __init__(self, max_len: int, rank: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.rank = rank
        self.dropout = dropout
        self.key_proj = nn.Parameter(torch.empty(rank, max_len))
        self.value_proj = nn.Parameter(torch.empty(rank, max_len))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # Xavier-normal, as nn.Linear(max_len, rank) is initialised in the reference Linformer code.
        nn.init.xavier_normal_(self.key_proj)
        nn.init.xavier_normal_(self.value_proj)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask) -> torch.Tensor:
        # q, k, v: (B, H, N, hd) → (B, H, N, hd)
        k_low, v_low, _ = self._project(k, v, mask)
        return attend(q, k_low, v_low, dropout=self.dropout if self.training else 0.0)

    def forward_with_weights(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward`, also returning the effective weights (B, H, N, N) on the N input values.

        softmax(Q (E K)ᵀ/√d) · F V = (A F) V with A the (N, rank) softmax, so A F is what each token applies
        to the values. Its rows need not sum to 1 and may be negative: F mixes before, not after, the softmax.
        """
        k_low, v_low, F_ = self._project(k, v, mask)
        out, low = attend_explicit(q, k_low, v_low, dropout=self.dropout if self.training else 0.0)
        weights = low @ F_  # (B, H, N, rank) @ (rank, N) → (B, H, N, N)
        if mask.key_mask is not None:  # padded values were zeroed, so they receive nothing
            weights = weights.masked_fill(~mask.key_mask[:, None, None, :], 0.0)
        return out, weights

    def _project(
        self, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Keys and values projected along the sequence: (B, H, rank, hd) each, and F's first N columns."""
        N, max_len = k.shape[-2], self.key_proj.shape[1]
        if max_len < N:
            raise ValueError(
                f"lowrank attention got {N} tokens but its projections span {max_len} (EncoderConfig."
                f"max_len plus register tokens); raise max_len (a new model), truncate the input in its "
                f"tokenizer, or use kind: local for long inputs"
            )
        if mask.causal:
            raise ValueError(
                "lowrank attention mixes all positions before the softmax, so it cannot be causal; use kind: "
                "full or local with causal=True"
            )
        if mask.key_mask is not None:
            real = mask.key_mask[:, None, :, None]  # (B, 1, N, 1)
            k, v = k.masked_fill(~real, 0.0), v.masked_fill(~real, 0.0)
        E = self.key_proj[:, :N].to(k.dtype)
        F_ = self.value_proj[:, :N].to(v.dtype)
        return E @ k, F_ @ v, F_  # (B, H, rank, hd) twice, (rank, N)
