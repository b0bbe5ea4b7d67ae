"""The backbone's configuration: every architectural switch in one self-validating dataclass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

PositionKind = Literal["none", "learned", "sinusoidal", "rotary"]
NormPlacement = Literal["pre", "post"]
NormKind = Literal["layernorm", "rmsnorm", "none"]
Activation = Literal["gelu", "gelu_tanh", "relu", "silu"]
AttentionKind = Literal["full", "local", "lowrank", "axial"]


@dataclass
class AttentionConfig:
    """Which token mixer each block uses (tabrasa/backbone/mixers.py): `full` (softmax over every token),
    `local` (sliding window + global tokens, blockwise), `lowrank` (Linformer), `axial` (row then column
    over a TokenGrid). Only `lowrank` adds weights, so a model trained with one kind loads into another.

    window: tokens each query sees on either side for `local` attention (a band of 2*window+1).
    global_tokens: leading tokens (CLS and friends) that attend to and are attended by every token (`local`).
    rank: keys and values are projected along the sequence to this many rows (`lowrank`, Linformer).
    max_len: longest sequence the `lowrank` projections accept.
    """

    kind: AttentionKind = "full"
    window: int = 128
    global_tokens: int = 0
    rank: int = 64
    max_len: int = 512

    def __post_init__(self) -> None:
        if self.kind not in ("full", "local", "lowrank", "axial"):
            raise ValueError(
                f"attention.kind={self.kind!r} is not known; choose one of full, local, lowrank, axial"
            )
        for name in ("window", "rank", "max_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"attention.{name}={getattr(self, name)} must be >= 1")
        if self.global_tokens < 0:
            raise ValueError(f"attention.global_tokens={self.global_tokens} must be >= 0")


@dataclass
class EncoderConfig:
    """Shape and switches of the transformer encoder.

    dim, depth, heads: width, number of blocks, attention heads (dim must divide by heads).
    mlp_ratio: hidden width of the feed-forward layer as a multiple of dim.
    norm_placement: "pre" (x + f(LN(x)), GPT-2/ViT) or "post" (LN(x + f(x)), the original and BERT).
    input_norm: a norm applied to the input tokens after positions are added (BERT's embedding LayerNorm).
    final_norm: a norm after the last block; defaults to on for pre-LN (where the residual stream is
        otherwise unnormalised) and off for post-LN.
    positions: "none" (a bag of tokens: outputs permute with inputs), "learned" (an absolute table of
        max_len rows), "sinusoidal" (fixed, Vaswani et al. 2017), "rotary" (RoFormer, applied to q and k).
    causal: each token attends only to itself and earlier tokens.
    checkpointing: recompute each block's activations in the backward pass to save memory.
    """

    dim: int = 128
    depth: int = 2
    heads: int = 4
    mlp_ratio: float = 4.0
    dropout: float = 0.0
    attention_dropout: float = 0.0
    norm_placement: NormPlacement = "pre"
    norm: NormKind = "layernorm"
    norm_eps: float = 1e-5
    input_norm: bool = False
    final_norm: bool | None = None
    activation: Activation = "gelu"
    bias: bool = True
    positions: PositionKind = "learned"
    max_len: int = 512
    rotary_base: float = 10000.0
    causal: bool = False
    checkpointing: bool = False
    attention: AttentionConfig = field(default_factory=AttentionConfig)

    def __post_init__(self) -> None:
        if isinstance(self.attention, dict):  # from YAML or a checkpoint's JSON
            self.attention = AttentionConfig(**self.attention)
        for name in ("dim", "depth", "heads", "max_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"EncoderConfig.{name}={getattr(self, name)} must be >= 1")
        if self.dim % self.heads:
            raise ValueError(
                f"EncoderConfig.dim={self.dim} is not divisible by heads={self.heads}; "
                f"pick heads among the divisors of dim, e.g. {_divisors(self.dim)}"
            )
        if self.positions == "rotary" and (self.dim // self.heads) % 2:
            raise ValueError(
                f"rotary positions need an even head width, got dim/heads = {self.dim // self.heads}"
            )
        if self.mlp_ratio <= 0:
            raise ValueError(f"EncoderConfig.mlp_ratio={self.mlp_ratio} must be > 0")
        for name in ("dropout", "attention_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"EncoderConfig.{name}={getattr(self, name)} must be in [0, 1)")
        checks = {
            "norm_placement": ("pre", "post"),
            "norm": ("layernorm", "rmsnorm", "none"),
            "activation": ("gelu", "gelu_tanh", "relu", "silu"),
            "positions": ("none", "learned", "sinusoidal", "rotary"),
        }
        for name, allowed in checks.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"EncoderConfig.{name}={getattr(self, name)!r}; choose one of {allowed}")
        if self.causal and self.attention.kind in ("lowrank", "axial"):
            raise ValueError(
                f"attention.kind={self.attention.kind!r} cannot be causal: it mixes positions without their "
                f"order; use kind: full or local with causal=True"
            )
        if self.final_norm is None:
            self.final_norm = self.norm_placement == "pre"

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    @property
    def mlp_dim(self) -> int:
        return int(self.dim * self.mlp_ratio)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, min(n, 64) + 1) if n % d == 0]
