"""Continuous depth: the residual stream as an ODE, dh/dt = f(h, t), with f one transformer block's branch.

A residual stack h_{l+1} = h_l + f_l(h_l) is Euler's method with step 1; tying the blocks' weights and
letting a solver choose the steps gives a neural ODE (Chen et al. 2018, "Neural Ordinary Differential
Equations"; Lu et al. 2018 read the transformer as one). Here f is the branch of one pre-norm tabrasa Block,
f(h) = block(h) - h = a + ls2(mlp(norm2(h + a))) with a = ls1(attn(norm1(h))), computed as the branch rather
than by the subtraction, and torchdiffeq integrates it from t = 0 to t1: fixed-step (euler, midpoint, rk4)
or adaptive (dopri5, with rtol and atol). `adjoint` computes gradients by solving the adjoint ODE backwards
(odeint_adjoint): memory constant in the number of steps, paid for with a second solve.

Padding: the attention mask reaches f through the closure (VectorField), and f is zero at padded tokens,
so they keep their input value and never enter a real token's update. Fixed-step solves are then exactly
padding-invariant. Adaptive ones measure their error over real tokens only (a masked RMS norm instead of
torchdiffeq's RMS over every element), so padding cannot move the step sizes either; but one solve serves
the whole batch, as in torchdiffeq, so the steps still depend on the batch's other rows (within rtol/atol).

Every evaluation of f is counted: `last_nfe` (the last forward solve), `last_backward_nfe` (adjoint
evaluations since that forward; 0 with direct backprop, which differentiates the recorded steps),
`total_nfe` (all, cumulative). `nfe_metrics(module)` gathers them for logging (see its docstring).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import nn

from tabrasa.backbone.block import Block
from tabrasa.backbone.config import (
    Activation,
    AttentionConfig,
    EncoderConfig,
    NormKind,
    PositionKind,
    check_choices,
)
from tabrasa.backbone.configured import ConfiguredBackbone
from tabrasa.backbone.encoder import Encoder
from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.norm import make_norm
from tabrasa.backbone.positions import LearnedPositions, Rotation, make_positions
from tabrasa.backbone.protocol import check_tokens
from tabrasa.backbone.tokens import TokenGrid

ODEMethod = Literal["euler", "midpoint", "rk4", "dopri5"]
TimeConditioning = Literal["none", "add", "concat"]
FIXED_STEP = ("euler", "midpoint", "rk4")


@dataclass
class ODEConfig:
    """The block that gives f, and how it is integrated.

    dim, heads, mlp_ratio, activation, norm, norm_eps, bias, qk_norm, layer_scale_init, attention: the
        block, as in EncoderConfig (always pre-norm: a post-norm block has no residual branch to integrate).
        No dropout: a random f makes an adaptive solver's error estimate meaningless.
    positions, max_len, rotary_base: as EncoderConfig; learned and sinusoidal positions enter h(0),
        rotary ones every evaluation of f.
    final_norm: a norm after the solve (the pre-norm residual stream is otherwise unnormalised).
    method: "euler", "midpoint", "rk4" (fixed steps: `steps` of them, f evaluated 1, 2, 4 times each;
        torchdiffeq's rk4 is Kutta's 3/8 rule) or "dopri5" (adaptive, to rtol/atol, at most max_steps
        steps: 2 evaluations to start, then 6 per attempted step).
    t1: integration time; euler with steps = t1 = 1 is one residual block.
    adjoint: gradients through odeint_adjoint instead of backprop through the solver's steps.
    time: how f sees t: "none" (default: autonomous, a weight-tied residual stack), "add" (h + W φ(t)) or
        "concat" (W [h; φ(t)], W starting as the identity on h); φ(t) = sin/cos of t at `time_features`/2
        frequencies up to π/t1, slow enough that a solver need not resolve oscillations in t.
    """

    dim: int = 128
    heads: int = 4
    mlp_ratio: float = 4.0
    activation: Activation = "gelu"
    norm: NormKind = "layernorm"
    norm_eps: float = 1e-5
    bias: bool = True
    qk_norm: bool = False
    layer_scale_init: float | None = None
    positions: PositionKind = "learned"
    max_len: int = 512
    rotary_base: float = 10000.0
    attention: AttentionConfig = field(default_factory=AttentionConfig)
    final_norm: bool = True
    method: ODEMethod = "midpoint"
    steps: int = 2
    t1: float = 1.0
    rtol: float = 1e-3
    atol: float = 1e-4
    max_steps: int = 1000
    adjoint: bool = False
    time: TimeConditioning = "none"
    time_features: int = 16

    def __post_init__(self) -> None:
        if isinstance(self.attention, dict):  # from YAML or a checkpoint's JSON
            self.attention = AttentionConfig(**self.attention)
        check_choices(self, "ODEConfig.")
        for name in ("dim", "heads", "max_len", "steps", "max_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"ODEConfig.{name}={getattr(self, name)} must be >= 1")
        if self.dim % self.heads:
            raise ValueError(
                f"ODEConfig.dim={self.dim} is not divisible by heads={self.heads}; pick a divisor"
            )
        for name in ("t1", "rtol", "atol", "mlp_ratio"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"ODEConfig.{name}={value} must be a finite value > 0")
        if self.time_features < 2 or self.time_features % 2:
            raise ValueError(f"ODEConfig.time_features={self.time_features} must be even and >= 2 (sin, cos)")
        self.block_config()  # the block's own checks (rotary head width, qk_norm, layer_scale_init)

    def block_config(self) -> EncoderConfig:
        """The one pre-norm block that gives f, as an EncoderConfig of depth 1 without positions."""
        return EncoderConfig(
            dim=self.dim, depth=1, heads=self.heads, mlp_ratio=self.mlp_ratio, activation=self.activation,
            norm=self.norm, norm_eps=self.norm_eps, bias=self.bias, qk_norm=self.qk_norm,
            layer_scale_init=self.layer_scale_init, positions="none", max_len=self.max_len,
            attention=self.attention, norm_placement="pre", final_norm=False,
        )  # fmt: skip


@dataclass
class NFECounter:
    """Evaluations of f inside a forward solve and outside one (the adjoint's backward solve)."""

    forward: int = 0
    backward: int = 0
    solving: bool = False

    def tick(self) -> None:
        if self.solving:
            self.forward += 1
        else:
            self.backward += 1


class TimeEmbedding(nn.Module):
    """How f sees t: "add" gives h + W φ(t) + b, "concat" W [h; φ(t)] + b (ConcatLinear of FFJORD,
    Grathwohl et al. 2019), initialised to pass h through unchanged plus a small term in t."""

    def __init__(self, mode: TimeConditioning, dim: int, features: int, t1: float) -> None:
        super().__init__()
        self.mode = mode
        self.harmonics: torch.Tensor
        # frequencies up to π / t1, half a period over the interval: f varies slowly in t, so a solver's
        # steps follow h rather than oscillations of the time features
        half = features // 2
        self.register_buffer("harmonics", math.pi * torch.arange(1, half + 1) / (half * t1), persistent=False)
        self.proj = nn.Linear(features + (dim if mode == "concat" else 0), dim)
        nn.init.trunc_normal_(self.proj.weight, std=0.02)
        nn.init.zeros_(self.proj.bias)
        if mode == "concat":
            with torch.no_grad():
                self.proj.weight[:, :dim] = torch.eye(dim)

    def forward(self, h: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        angles = t.to(h.dtype) * self.harmonics.to(h.dtype)
        phi = torch.cat((angles.sin(), angles.cos())).expand(*h.shape[:-1], -1)  # (B, N, features)
        return h + self.proj(phi) if self.mode == "add" else self.proj(torch.cat((h, phi), dim=-1))


class VectorField(nn.Module):
    """f(t, h) for one batch: the block's branch with this batch's mask and rotation, zero at padding.
    An nn.Module so odeint_adjoint finds the block's (and time embedding's) parameters."""

    def __init__(
        self,
        block: Block,
        time: TimeEmbedding | None,
        mask: AttentionMask,
        rotation: Rotation | None,
        keep: torch.Tensor | None,
        counter: NFECounter,
    ) -> None:
        super().__init__()
        self.block, self.time = block, time
        self.mask, self.rotation, self.keep, self.counter = mask, rotation, keep, counter

    def forward(self, t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        self.counter.tick()
        x = h if self.time is None else self.time(h, t)
        b = self.block
        a = b.ls1(b.attn(b.norm1(x), self.mask, self.rotation))
        f = a + b.ls2(b.mlp(b.norm2(x + a)))  # block(x) - x, without the cancellation
        return f if self.keep is None else f * self.keep


class ODEEncoder(ConfiguredBackbone[ODEConfig]):
    """`encoder(x, mask)`: x float (B, N, D), mask bool (B, N) True at real tokens (None = all real) →
    h(t1) (B, N, D), zero at padding. A row with no real token gives zeros.

    State-dict names: positions.weight (learned only), time.proj.* (time conditioning only), block.* (as an
    Encoder's blocks.{i}.*, so a trained block loads either way), norm.*.
    """

    def __init__(self, config: ODEConfig) -> None:
        super().__init__(config, ODEConfig)
        _require_torchdiffeq()
        c = self.config
        self.positions, self.rotary = make_positions(
            c.positions, c.max_len, c.dim, c.dim // c.heads, c.rotary_base
        )
        self.time = None if c.time == "none" else TimeEmbedding(c.time, c.dim, c.time_features, c.t1)
        # The Encoder's own block construction and initialisation, so f is exactly one Encoder block.
        self.block = Encoder(c.block_config()).blocks[0]
        self.norm = make_norm(c.norm, c.dim, c.norm_eps, c.bias) if c.final_norm else nn.Identity()
        self.counter = NFECounter()
        self.last_nfe = 0
        self._backward_mark = 0

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: TokenGrid | None = None
    ) -> torch.Tensor:
        check_tokens("ODEEncoder", x, mask, self.dim)
        if self.positions is not None:
            x = self.positions(x)
        rotation = None if self.rotary is None else self.rotary(x.shape[1])
        keep = None if mask is None else mask[..., None].to(x.dtype)  # (B, N, 1)
        f = VectorField(
            self.block, self.time, AttentionMask.build(mask, False, grid), rotation, keep, self.counter
        )
        h = self.norm(self._solve(f, x, keep))
        return h if mask is None else h.masked_fill(~mask[..., None], 0.0)

    def _solve(self, f: VectorField, h0: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
        # imported here, so `import tabrasa.backbone` works without the optional torchdiffeq (and its scipy)
        from torchdiffeq import odeint, odeint_adjoint

        c = self.config
        t = torch.tensor([0.0, c.t1], dtype=h0.dtype, device=h0.device)
        if c.method in FIXED_STEP:
            options: dict[str, object] = {"grid_constructor": _even_grid(c.steps)}
        else:
            options = {"norm": _real_token_rms(keep), "max_num_steps": c.max_steps}
        solve = odeint_adjoint if c.adjoint and torch.is_grad_enabled() else odeint
        start, self._backward_mark = self.counter.forward, self.counter.backward
        self.counter.solving = True
        try:
            h1 = solve(f, h0, t, rtol=c.rtol, atol=c.atol, method=c.method, options=options)[-1]
        except AssertionError as error:  # torchdiffeq's only report of a solve that would not end
            if "max_num_steps" not in str(error):
                raise
            raise RuntimeError(
                f"ODEEncoder: {c.method} needed more than max_steps={c.max_steps} steps to reach rtol="
                f"{c.rtol}, atol={c.atol}; raise max_steps, loosen rtol/atol, or use a fixed-step method"
            ) from error
        finally:
            self.counter.solving = False
        self.last_nfe = self.counter.forward - start
        return h1

    @property
    def last_backward_nfe(self) -> int:
        """Evaluations of f since the last forward began outside it: the adjoint's backward solve."""
        return self.counter.backward - self._backward_mark

    @property
    def total_nfe(self) -> int:
        return self.counter.forward + self.counter.backward

    def no_weight_decay(self) -> set[str]:
        """The position table is an embedding, which weight decay would only shrink (as Encoder's)."""
        return {"positions.weight"} if isinstance(self.positions, LearnedPositions) else set()


def nfe_metrics(module: nn.Module) -> dict[str, float]:
    """NFE of every ODEEncoder inside `module`, named for a logger: {prefix}nfe (last forward solve),
    {prefix}nfe_backward (its adjoint backward solve) and {prefix}nfe_total (cumulative), prefix being the
    submodule's name ("backbone/" for `task.backbone`). Empty when there is none.

    A task logs them with every step by `self.log_dict(nfe_metrics(self))` in training_step, or, to include
    the backward solve, from a Lightning callback's on_train_batch_end(trainer, pl_module, ...) as
    `pl_module.log_dict(nfe_metrics(pl_module), on_step=True)`.
    """
    found: dict[str, float] = {}
    for name, sub in module.named_modules():
        if isinstance(sub, ODEEncoder):
            prefix = f"{name}/" if name else ""
            found[f"{prefix}nfe"] = float(sub.last_nfe)
            found[f"{prefix}nfe_backward"] = float(sub.last_backward_nfe)
            found[f"{prefix}nfe_total"] = float(sub.total_nfe)
    return found


def _even_grid(steps: int) -> Callable[..., torch.Tensor]:
    """`steps` equal steps over [t0, t1]: torchdiffeq's step_size option rounds ceil(T / step) and can add
    a sliver of a step, so the grid is given directly."""

    def grid(func: object, y0: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return torch.linspace(float(t[0]), float(t[-1]), steps + 1, dtype=t.dtype, device=t.device)

    return grid


def _real_token_rms(keep: torch.Tensor | None) -> Callable[[torch.Tensor], torch.Tensor]:
    """torchdiffeq's RMS norm over real tokens only: padding neither adds error nor dilutes the mean."""
    if keep is None:
        return lambda x: x.pow(2).mean().sqrt()
    count = keep.sum().clamp_min(1)

    def norm(x: torch.Tensor) -> torch.Tensor:
        return ((x * keep).pow(2).sum() / (count * x.shape[-1])).sqrt()

    return norm


def _require_torchdiffeq() -> None:
    try:
        import torchdiffeq  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "ODEEncoder solves with torchdiffeq, which is not installed; pip install 'torchdiffeq>=0.2.4'"
        ) from error
