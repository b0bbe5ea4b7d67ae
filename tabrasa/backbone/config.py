"""The backbone's configuration: every architectural switch in one self-validating dataclass."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin, get_type_hints

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
    rank: keys and values are projected along the sequence to this many rows (`lowrank`, Linformer); the
        projections span EncoderConfig.max_len tokens (plus any register tokens).
    """

    kind: AttentionKind = "full"
    window: int = 128
    global_tokens: int = 0
    rank: int = 64

    def __post_init__(self) -> None:
        check_choices(self, "attention.")
        for name in ("window", "rank"):
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
    bias: biases in every Linear and norm. qkv_bias: biases of the query/key/value projection alone
        (None = follow `bias`); timm ViTs such as DeiT-III and DINOv2-reg variants differ here.
    positions: "none" (a bag of tokens: outputs permute with inputs), "learned" (an absolute table of
        max_len rows), "sinusoidal" (fixed, Vaswani et al. 2017), "rotary" (RoFormer, applied to q and k).
    max_len: the longest input, in tokens; sizes the position tables and the `lowrank` projections.
    causal: each token attends only to itself and earlier tokens.
    checkpointing: recompute each block's activations in the backward pass to save memory.
    layer_scale_init: per-channel scales on each residual branch, initialised to this value (LayerScale,
        Touvron et al. 2021, "Going deeper with Image Transformers" / CaiT); None = off.
    register_tokens: learned tokens that join every sequence and are dropped from the output (Darcet et al.
        2024, "Vision Transformers Need Registers"); 0 = off.
    qk_norm: normalise queries and keys per head before the dot product (Dehghani et al. 2023, ViT-22B),
        with the `norm` kind over head_dim channels.
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
    qkv_bias: bool | None = None
    positions: PositionKind = "learned"
    max_len: int = 512
    rotary_base: float = 10000.0
    causal: bool = False
    checkpointing: bool = False
    layer_scale_init: float | None = None
    register_tokens: int = 0
    qk_norm: bool = False
    attention: AttentionConfig = field(default_factory=AttentionConfig)

    def __post_init__(self) -> None:
        if isinstance(self.attention, dict):  # from YAML or a checkpoint's JSON
            self.attention = AttentionConfig(**_without_legacy_max_len(self.attention, self.max_len))
        check_choices(self, "EncoderConfig.")
        self._check_sizes()
        if self.causal and self.attention.kind in ("lowrank", "axial"):
            raise ValueError(
                f"attention.kind={self.attention.kind!r} cannot be causal: it mixes positions without their "
                f"order; use kind: full or local with causal=True"
            )
        self._check_options()
        if self.final_norm is None:
            self.final_norm = self.norm_placement == "pre"
        if self.qkv_bias is None:
            self.qkv_bias = self.bias

    def _check_sizes(self) -> None:
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

    def _check_options(self) -> None:
        scale = self.layer_scale_init
        if scale is not None and not (math.isfinite(scale) and scale >= 0):
            raise ValueError(
                f"EncoderConfig.layer_scale_init={scale} must be a finite value >= 0 (CaiT uses 1e-5 to "
                f"0.1); set it to None to turn LayerScale off"
            )
        if self.register_tokens < 0:
            raise ValueError(f"EncoderConfig.register_tokens={self.register_tokens} must be >= 0 (0 = off)")
        if self.register_tokens and self.causal:
            raise ValueError(
                f"EncoderConfig.register_tokens={self.register_tokens} with causal=True: registers are read "
                f"by every token, which a causal mask forbids; set register_tokens: 0 or causal: false"
            )
        if self.qk_norm and self.norm == "none":
            raise ValueError(
                "EncoderConfig.qk_norm=True needs a norm to apply, but norm='none'; set norm: layernorm "
                "(timm's qk_norm) or rmsnorm, or qk_norm: false"
            )

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    @property
    def mlp_dim(self) -> int:
        return int(self.dim * self.mlp_ratio)


def check_choices(config: object, prefix: str) -> None:
    """Every field typed as a Literal must hold one of its values; the choices come from the type alone."""
    for name, choices in _literal_fields(type(config)).items():
        value = getattr(config, name)
        if value not in choices:
            raise ValueError(
                f"{prefix}{name}={value!r} is not known; choose one of {', '.join(map(str, choices))}"
            )


@functools.cache
def _literal_fields(cls: type) -> dict[str, tuple[Any, ...]]:
    hints = get_type_hints(cls)
    return {name: get_args(hint) for name, hint in hints.items() if get_origin(hint) is Literal}


def _without_legacy_max_len(attention: dict[str, Any], max_len: int) -> dict[str, Any]:
    """Configs saved before EncoderConfig.max_len sized the low-rank projections carry attention.max_len."""
    attention = dict(attention)
    legacy = attention.pop("max_len", None)
    if legacy is not None and attention.get("kind") == "lowrank" and legacy != max_len:
        raise ValueError(
            f"attention.max_len={legacy} differs from EncoderConfig.max_len={max_len}; one max_len now sizes "
            f"both the position table and the lowrank projections: drop attention.max_len and set "
            f"max_len: {legacy}"
        )
    return attention


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, min(n, 64) + 1) if n % d == 0]
