"""Gated attention units (GAU) and FLASH, Hua et al. 2022, "Transformer Quality in Linear Time".

One unit replaces a transformer block's attention and feed-forward: from the normed tokens it makes a gate
u = SiLU(W_u x), values v = SiLU(W_v x) and one shared base z = SiLU(W_z x) of width s, turns z into queries
and keys by per-channel scales and offsets (q = z·γ_q + β_q, k = z·γ_k + β_k), mixes the values with a single
head of squared-ReLU attention and returns x + W_o(u ⊙ A v). Two forms:

- quadratic (GAU, the paper's FLASH-Quad): A = relu²(q kᵀ / n) over the whole sequence, n real tokens.
- chunked (FLASH's mixed chunk attention): the sequence is cut into groups of `chunk` tokens; A is relu²
  attention within each group, scaled by 1/chunk, plus a linear (kernel-free) attention across the whole
  sequence, q' (k'ᵀ v) / n, with its own queries and keys q', k'. Cost O(N·chunk + N·s·e), linear in N.
  With one chunk holding the whole sequence (chunk = N) and q' = k' = 0 it is the quadratic form; with
  more chunks the quadratic part is block-diagonal (tests/backbone/test_gau.py checks both).

Encoders here are bidirectional (non-causal). Semantics follow flash-pytorch 0.1.9 (`GAU`, `FLASH`), which
tests/pretrained/test_flash_pytorch.py checks to 1e-5 (tabrasa/pretrained/flash_pytorch.py maps its weights),
except where padding would leak into real tokens:

- Padding. Padded keys are excluded and padded tokens' values zeroed; the 1/n of the quadratic form and of
  the linear part counts each row's real tokens. flash-pytorch masks padded keys as well but divides by
  the padded length (and zeroes no values), so its real-token outputs change with the amount of padding;
  the two agree without padding, and on a padded row tabrasa equals flash-pytorch on the row alone.
- flash-pytorch 0.1.9 adds a T5 relative position bias to every unit's scores, whatever its `rel_pos_bias`
  argument says; tabrasa has none (the converter refuses a bias table that is not zero).
- Rotary positions pair channels (i, i + r/2) here (tabrasa's RotaryPositions) and (2i, 2i+1) in
  rotary-embedding-torch; the converter permutes the query/key channels, which makes the two identical.
- Token shift (flash-pytorch's `shift_tokens`) and the Laplace attention function (`laplace_attn_fn`, Ma
  et al. 2022) are options here too; its per-group linear attention (`reduce_group_non_causal_attn=False`)
  and its causal mode are not. Dropout: flash-pytorch's FLASH drops attention weights only, its GAU also
  the output, as both forms here do (the same function in eval mode).

Initialisation as flash-pytorch: PyTorch's default for Linear layers, γ ~ N(0, 0.02), β = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone.config import PositionKind, check_choices
from tabrasa.backbone.configured import ConfiguredBackbone
from tabrasa.backbone.norm import make_norm
from tabrasa.backbone.positions import LearnedPositions, Rotation, make_positions
from tabrasa.backbone.protocol import check_tokens
from tabrasa.backbone.tokens import TokenGrid

GAUForm = Literal["quadratic", "chunked"]
GAUKernel = Literal["relu2", "laplace"]
GAUNorm = Literal["layernorm", "scalenorm", "rmsnorm"]


@dataclass
class GAUConfig:
    """Shape and switches of a GAU/FLASH encoder.

    dim, depth: token width and number of stacked units (two units have about the parameters of one
        transformer block: 3·d·e + d·s against 12·d²).
    expansion: e = int(expansion · dim), the width of the gate and the values (the paper's e = 2d).
    qk_dim: s, the width of the shared query/key base (the paper's 128).
    form: "quadratic" (GAU) or "chunked" (FLASH's mixed chunk attention, linear in the length).
    chunk: group size of the chunked form (the paper's 256); its quadratic part is scaled by 1/chunk.
    kernel: "relu2" (the paper's relu²) or "laplace" (Ma et al. 2022, "Mega", more stable than relu²).
    norm: pre-norm of each unit and the final norm: "layernorm" (flash-pytorch's GAU default),
        "scalenorm" (Nguyen & Salazar 2019; flash-pytorch's FLASHTransformer default) or "rmsnorm".
    final_norm: a norm after the last unit (the residual stream of a pre-norm stack is unnormalised).
    shift_tokens: shift half the channels of the normed tokens one position to the right before the
        projections (flash-pytorch's token shift); off by default, since it looks only backwards.
    positions: "rotary" (default, as flash-pytorch's FLASHTransformer: rotates the queries and keys of
        both parts), "learned", "sinusoidal" (added to the input tokens) or "none".
    rotary_dim: how many leading query/key channels rotate (partial rotary, GPT-J; flash-pytorch uses
        min(32, s)); None = all s.
    max_len: the longest input, in tokens; sizes the position tables.
    dropout: on the attention weights and on each unit's output.
    """

    dim: int = 128
    depth: int = 4
    expansion: float = 2.0
    qk_dim: int = 128
    form: GAUForm = "quadratic"
    chunk: int = 256
    kernel: GAUKernel = "relu2"
    norm: GAUNorm = "layernorm"
    norm_eps: float = 1e-5
    final_norm: bool = True
    shift_tokens: bool = False
    positions: PositionKind = "rotary"
    rotary_dim: int | None = None
    rotary_base: float = 10000.0
    max_len: int = 512
    dropout: float = 0.0

    def __post_init__(self) -> None:
        check_choices(self, "GAUConfig.")
        for name in ("dim", "depth", "qk_dim", "chunk", "max_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"GAUConfig.{name}={getattr(self, name)} must be >= 1")
        if not (math.isfinite(self.expansion) and int(self.expansion * self.dim) >= 1):
            raise ValueError(
                f"GAUConfig.expansion={self.expansion} gives a hidden width int({self.expansion} * "
                f"{self.dim}) < 1; use a value > 0 such as 2.0 (the paper's e = 2d)"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GAUConfig.dropout={self.dropout} must be in [0, 1)")
        if self.norm_eps <= 0:
            raise ValueError(f"GAUConfig.norm_eps={self.norm_eps} must be > 0, e.g. 1e-5")
        if self.positions == "rotary":
            rotated = self.qk_dim if self.rotary_dim is None else self.rotary_dim
            if not (1 <= rotated <= self.qk_dim and rotated % 2 == 0):
                raise ValueError(
                    f"GAUConfig.rotary_dim={rotated} must be even and in [2, qk_dim={self.qk_dim}] (channel "
                    f"pairs rotate); pick an even rotary_dim, or an even qk_dim with rotary_dim: null"
                )

    @property
    def hidden(self) -> int:
        return int(self.expansion * self.dim)

    @property
    def heads(self) -> int:
        """Scale/offset pairs made from the base: q, k (quadratic) or q, q', k, k' (chunked)."""
        return 2 if self.form == "quadratic" else 4

    @property
    def rotated(self) -> int:
        return self.qk_dim if self.rotary_dim is None else self.rotary_dim


class ScaleNorm(nn.Module):
    """g · x / max(‖x‖ / √d, eps): one learned scalar (Nguyen & Salazar 2019, "Transformers without Tears").
    Written here because torch has no ScaleNorm; flash-pytorch's is the same function."""

    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.scale = dim**-0.5
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True) * self.scale
        return x / norm.clamp(min=self.eps) * self.weight


class ScaleOffset(nn.Module):
    """Per-channel scales and offsets that make `heads` queries and keys from one base z (B, N, s)."""

    def __init__(self, heads: int, dim: int) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.empty(heads, dim))
        self.beta = nn.Parameter(torch.zeros(heads, dim))
        nn.init.normal_(self.gamma, std=0.02)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z[:, None] * self.gamma[:, None] + self.beta[:, None]  # (B, N, s) → (B, H, N, s)


def laplace(x: torch.Tensor) -> torch.Tensor:
    """The Laplace attention function of Mega (Ma et al. 2022): 0.5 · (1 + erf((x - μ) / (σ√2))), with
    μ = √½ and σ = √(1/4π) chosen to approximate relu² near 0 while staying bounded."""
    mu, std = math.sqrt(0.5), math.sqrt(1 / (4 * math.pi))
    return 0.5 * (1 + torch.erf((x - mu) / (std * math.sqrt(2))))


def relu2(x: torch.Tensor) -> torch.Tensor:
    return F.relu(x) ** 2


def linear_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor | None, count: torch.Tensor
) -> torch.Tensor:
    """Global linear attention q (kᵀ v) / n: non-causal, so one (s, e) summary serves every group."""
    if keep is not None:
        k = k * keep
    return q @ (k.transpose(1, 2) @ v / count)  # (B, N, s) @ (B, s, e)


def shift_tokens(x: torch.Tensor) -> torch.Tensor:
    """The first half of the channels moves one token to the right; the first token gets zeros there."""
    shift, keep = x.chunk(2, dim=-1)
    return torch.cat((F.pad(shift, (0, 0, 1, -1)), keep), dim=-1)


class GatedAttentionUnit(nn.Module):
    """x + W_o(u ⊙ A v), pre-norm; `form` picks A. State-dict names: norm.*, hidden.* (values then gate:
    one (2e, d) Linear), base.* (the shared z), scale_offset.gamma/beta (rows q, k for the quadratic form;
    q, q', k, k' for the chunked one, flash-pytorch's order), out.*."""

    def __init__(self, config: GAUConfig) -> None:
        super().__init__()
        c = config
        self.form, self.chunk, self.shift = c.form, c.chunk, c.shift_tokens
        self.kernel = relu2 if c.kernel == "relu2" else laplace
        self.rotated = c.rotated
        self.norm = _make_norm(c.norm, c.dim, c.norm_eps)
        self.hidden = nn.Linear(c.dim, 2 * c.hidden)
        self.base = nn.Linear(c.dim, c.qk_dim)
        self.scale_offset = ScaleOffset(c.heads, c.qk_dim)
        self.out = nn.Linear(c.hidden, c.dim)
        self.drop = nn.Dropout(c.dropout)

    def forward(
        self, x: torch.Tensor, keep: torch.Tensor | None, count: torch.Tensor, rotation: Rotation | None
    ) -> torch.Tensor:
        """x (B, N, D); keep (B, N, 1) float, 1 at real tokens (None = all real); count (B, 1, 1) real
        tokens per row, at least 1; rotation: rotary tables (N, rotated) or None."""
        h = self.norm(x)
        if self.shift:
            h = shift_tokens(h)
        v, u = F.silu(self.hidden(h)).chunk(2, dim=-1)  # (B, N, e) each
        if keep is not None:
            v = v * keep  # padded values contribute nothing, whatever the attention function gives them
        qk = self.scale_offset(F.silu(self.base(h)))  # (B, H, N, s)
        if rotation is not None:
            qk = self._rotate(qk, rotation)
        N = x.shape[1]
        if self.form == "quadratic":
            q, k = qk.unbind(1)
            mixed = self._grouped(q, k, v, keep, N, count[:, None])  # relu²(q kᵀ / n), n the real tokens
        else:
            q, lin_q, k, lin_k = qk.unbind(1)
            chunked = self._grouped(q, k, v, keep, min(self.chunk, N), self.chunk)
            mixed = chunked + linear_attention(lin_q, lin_k, v, keep, count)
        return x + self.drop(self.out(u * mixed))

    def _rotate(self, qk: torch.Tensor, rotation: Rotation) -> torch.Tensor:
        """Rotary on the first `rotated` channels of every query (first half of H) and key (second half)."""
        r, H = self.rotated, qk.shape[1]
        queries, keys = rotation(qk[:, : H // 2, :, :r], qk[:, H // 2 :, :, :r])
        return torch.cat((torch.cat((queries, keys), dim=1), qk[..., r:]), dim=-1)

    def _weights(self, scores: torch.Tensor, keys: torch.Tensor | None) -> torch.Tensor:
        """Attention function, then padded keys excluded (laplace(0) is not 0), then dropout."""
        weights = self.kernel(scores)
        if keys is not None:
            weights = weights * keys
        return self.drop(weights)

    def _grouped(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        keep: torch.Tensor | None,
        group: int,
        scale: torch.Tensor | float,
    ) -> torch.Tensor:
        """relu²(q kᵀ / scale) attention within consecutive groups of `group` tokens: the quadratic form is
        one group of the whole sequence scaled by each row's real tokens (scale (B, 1, 1, 1)), the chunked
        form groups of `chunk` scaled by 1/chunk however full the last group.

        A sequence shorter than `chunk` is one group of its own length: the tokens a full group would add
        are zero-valued fill, so leaving them out changes nothing but the cost."""
        B, N, _ = q.shape
        fill = -N % group
        if fill:
            q, k, v = (F.pad(t, (0, 0, 0, fill)) for t in (q, k, v))
            keep = F.pad(keep, (0, 0, 0, fill)) if keep is not None else None
        G = (N + fill) // group
        q, k, v = (t.view(B, G, group, -1) for t in (q, k, v))  # (B, G, g, ·)
        keys = None if keep is None else keep.view(B, G, 1, group)
        out = self._weights(q @ k.transpose(-1, -2) / scale, keys) @ v  # (B, G, g, e)
        return out.view(B, G * group, -1)[:, :N]


class GAUEncoder(ConfiguredBackbone[GAUConfig]):
    """`depth` gated attention units. `encoder(x, mask)`: x float (B, N, D), mask bool (B, N) True at real
    tokens (None = all real) → (B, N, D), zero at padding. A row with no real token gives zeros.

    State-dict names: positions.weight (learned positions only), units.{i}.* (GatedAttentionUnit), norm.*.
    """

    def __init__(self, config: GAUConfig) -> None:
        super().__init__(config, GAUConfig)
        c = self.config
        self.positions, self.rotary = make_positions(c.positions, c.max_len, c.dim, c.rotated, c.rotary_base)
        self.units = nn.ModuleList(GatedAttentionUnit(c) for _ in range(c.depth))
        self.norm = _make_norm(c.norm, c.dim, c.norm_eps) if c.final_norm else nn.Identity()

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        """grid is accepted for the Backbone protocol and unused: the units see a sequence."""
        check_tokens("GAUEncoder", x, mask, self.dim)
        B, N, _ = x.shape
        if self.positions is not None:
            x = self.positions(x)
        rotation = None if self.rotary is None else self.rotary(N)
        keep = None if mask is None else mask[..., None].to(x.dtype)  # (B, N, 1)
        count = x.new_full((B, 1, 1), N) if keep is None else keep.sum(dim=1, keepdim=True).clamp_min(1)
        for unit in self.units:
            x = unit(x, keep, count, rotation)
        x = self.norm(x)
        return x if mask is None else x.masked_fill(~mask[..., None], 0.0)

    def no_weight_decay(self) -> set[str]:
        """Parameters weight decay would only shrink toward zero (timm's hook, as Encoder's): the position
        table and the query/key scales and offsets, per-channel gains however 2-D their (H, s) shape."""
        names = {f"units.{i}.scale_offset.{p}" for i in range(len(self.units)) for p in ("gamma", "beta")}
        return names | ({"positions.weight"} if isinstance(self.positions, LearnedPositions) else set())


def _make_norm(kind: GAUNorm, dim: int, eps: float) -> nn.Module:
    return ScaleNorm(dim, eps) if kind == "scalenorm" else make_norm(kind, dim, eps, bias=True)
