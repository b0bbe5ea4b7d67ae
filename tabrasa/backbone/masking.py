"""What each attention layer needs to know about which tokens may see which.

Built once per forward pass and shared by every block, so the (B, 1, 1, N) key mask and the causal band
are not rebuilt per layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from tabrasa.backbone.tokens import TokenGrid


@dataclass
class AttentionMask:
    """Key padding (True = real token), causality and optional grid for one batch.

    A sequence whose tokens are all padding is given a key mask of all True: the softmax over an empty set
    is NaN, and NaN in one row poisons the whole batch's gradients. Its outputs are zeroed by the encoder.
    """

    key_mask: torch.Tensor | None  # (B, N) bool, None when every token is real
    causal: bool = False
    grid: TokenGrid | None = None
    _sdpa: torch.Tensor | None = field(default=None, repr=False)

    @classmethod
    def build(cls, mask: torch.Tensor | None, causal: bool, grid: TokenGrid | None = None) -> AttentionMask:
        if mask is not None:
            mask = None if bool(mask.all()) else mask | ~mask.any(dim=-1, keepdim=True)
        return cls(key_mask=mask, causal=causal, grid=grid)

    def sdpa_mask(self, n: int, device: torch.device) -> torch.Tensor | None:
        """The boolean mask scaled_dot_product_attention takes: (B, 1, N, N) or (B, 1, 1, N), or None."""
        if self._sdpa is not None:
            return self._sdpa
        mask = None if self.key_mask is None else self.key_mask[:, None, None, :]  # (B, 1, 1, N)
        if self.causal and mask is not None:
            band = torch.ones(n, n, dtype=torch.bool, device=device).tril()
            mask = mask & band  # (B, 1, N, N)
            # A padded query that precedes every real key would see nothing; let it see itself.
            mask = mask | torch.eye(n, dtype=torch.bool, device=device)
        self._sdpa = mask
        return mask

    @property
    def sdpa_is_causal(self) -> bool:
        """Causal without padding: let SDPA use its fused causal kernel instead of a materialised mask."""
        return self.causal and self.key_mask is None
