"""The shared backbone: a stack of transformer blocks that maps tokens to contextual tokens.

It knows nothing of modalities. Tokenizer embedders turn text, patches, frames or residues into
(B, N, D) tokens and a (B, N) mask; task heads read what comes out.
"""

from __future__ import annotations

from typing import Literal, overload

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from tabrasa.backbone.attention import MultiHeadAttention
from tabrasa.backbone.block import Block
from tabrasa.backbone.config import EncoderConfig
from tabrasa.backbone.configured import ConfiguredBackbone
from tabrasa.backbone.layer_scale import LayerScale
from tabrasa.backbone.masking import AttentionMask
from tabrasa.backbone.mixers import make_mixer
from tabrasa.backbone.mlp import Mlp
from tabrasa.backbone.norm import make_norm
from tabrasa.backbone.positions import make_positions
from tabrasa.backbone.registers import prepend_registers
from tabrasa.backbone.tokens import TokenGrid


class Encoder(ConfiguredBackbone[EncoderConfig]):
    """Transformer encoder. `encoder(x, mask)`: x float (B, N, D), mask bool (B, N) True at real tokens
    (None = all real) → (B, N, D). Outputs at padding positions are zero.

    State-dict names are the checkpoint format and stay stable:
    positions.weight, register_tokens, norm_in.*, blocks.{i}.norm1.*, blocks.{i}.attn.qkv.*,
    blocks.{i}.attn.q_norm.*, blocks.{i}.attn.k_norm.*, blocks.{i}.attn.proj.*, blocks.{i}.ls1.gamma,
    blocks.{i}.norm2.*, blocks.{i}.mlp.fc1.*, blocks.{i}.mlp.fc2.*, blocks.{i}.ls2.gamma, norm.*
    (register_tokens, q_norm, k_norm, ls1, ls2 only when their option is on).
    """

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__(config, EncoderConfig)
        c = self.config
        self.positions, self.rotary = make_positions(c.positions, c.max_len, c.dim, c.head_dim, c.rotary_base)
        self.register_tokens: nn.Parameter | None = None
        if c.register_tokens:
            # DINOv2 and timm initialise registers as N(0, 1e-6).
            self.register_tokens = nn.Parameter(torch.randn(1, c.register_tokens, c.dim) * 1e-6)
        self.norm_in = make_norm(c.norm, c.dim, c.norm_eps, c.bias) if c.input_norm else nn.Identity()
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(self._make_block() for _ in range(c.depth))
        self.norm = make_norm(c.norm, c.dim, c.norm_eps, c.bias) if c.final_norm else nn.Identity()
        self.apply(_init_weights)

    def _make_block(self) -> Block:
        c = self.config
        attn = MultiHeadAttention(
            c.dim,
            c.heads,
            make_mixer(c),
            bias=c.bias,
            qkv_bias=c.qkv_bias,
            q_norm=make_norm(c.norm, c.head_dim, c.norm_eps, c.bias) if c.qk_norm else None,
            k_norm=make_norm(c.norm, c.head_dim, c.norm_eps, c.bias) if c.qk_norm else None,
        )
        scale = c.layer_scale_init
        return Block(
            attn,
            Mlp(c.dim, c.mlp_dim, c.activation, c.dropout, c.bias),
            make_norm(c.norm, c.dim, c.norm_eps, c.bias),
            make_norm(c.norm, c.dim, c.norm_eps, c.bias),
            c.norm_placement,
            c.dropout,
            ls1=None if scale is None else LayerScale(c.dim, scale),
            ls2=None if scale is None else LayerScale(c.dim, scale),
        )

    @overload
    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        grid: TokenGrid | None = None,
        return_attention: Literal[False] = False,
    ) -> torch.Tensor: ...

    @overload
    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        grid: TokenGrid | None = None,
        return_attention: Literal[True],
    ) -> tuple[torch.Tensor, list[torch.Tensor]]: ...

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        grid: TokenGrid | None = None,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """return_attention: also return each block's attention weights, a list of `depth` tensors
        (B, H, R+N, R+N) over the R register tokens then the N input tokens, computed by each mixer's
        explicit path (O(N²) memory, for inspection); the outputs equal the fused path's."""
        self._check_inputs(x, mask)
        N, R = x.shape[1], self.config.register_tokens
        if self.positions is not None:
            x = self.positions(x)
        rotation = None if self.rotary is None else self.rotary(N, unrotated=R)  # tables (R+N, hd)
        inner_mask = mask
        if self.register_tokens is not None:
            x, inner_mask, grid = prepend_registers(self.register_tokens, x, mask, grid)  # (B, R+N, D)
        x = self.drop(self.norm_in(x))
        attn_mask = AttentionMask.build(inner_mask, self.config.causal, grid)
        record: list[torch.Tensor] | None = [] if return_attention else None
        for block in self.blocks:
            if self.config.checkpointing and self.training and torch.is_grad_enabled() and record is None:
                x = checkpoint(block, x, attn_mask, rotation, use_reentrant=False)
            else:
                x = block(x, attn_mask, rotation, record)
        x = self.norm(x[:, R:])  # (B, N, D): registers leave here
        if mask is not None:
            x = x.masked_fill(~mask[..., None], 0.0)
        return x if record is None else (x, record)

    def no_weight_decay(self) -> set[str]:
        """Parameters that are embeddings rather than maps, so weight decay would only shrink them toward
        zero (timm's `no_weight_decay`): the position table and the register tokens."""
        names = dict(self.named_parameters())
        return {name for name in ("positions.weight", "register_tokens") if name in names}

    def _check_inputs(self, x: torch.Tensor, mask: torch.Tensor | None) -> None:
        if x.ndim != 3 or x.shape[-1] != self.dim:
            raise ValueError(
                f"Encoder input x has shape {tuple(x.shape)}; expected (batch, tokens, {self.dim}). "
                f"Embed raw inputs with a tabrasa.tokenizers embedder first"
            )
        if not x.is_floating_point():
            raise TypeError(f"Encoder input x has dtype {x.dtype}; expected a float tensor of token vectors")
        weights = next((p.dtype for p in self.parameters() if p.is_floating_point()), x.dtype)
        if x.dtype != weights and not torch.is_autocast_enabled(x.device.type):
            raise TypeError(
                f"Encoder input x has dtype {x.dtype} but the encoder's weights are {weights}; cast one to "
                f"the other (x.to({weights}) or encoder.to({x.dtype})) or run under torch.autocast"
            )
        if x.shape[1] == 0:
            raise ValueError("Encoder input x has 0 tokens; every sequence needs at least one token")
        if mask is not None:
            if mask.dtype != torch.bool:
                raise TypeError(f"Encoder mask has dtype {mask.dtype}; expected bool (True at real tokens)")
            if mask.shape != x.shape[:2]:
                raise ValueError(
                    f"Encoder mask has shape {tuple(mask.shape)}; expected {tuple(x.shape[:2])} to match x"
                )


def _init_weights(module: nn.Module) -> None:
    """Truncated-normal(0.02) linear weights and zero biases, as BERT, GPT-2 and timm's ViT."""
    if isinstance(module, nn.Linear):
        nn.init.trunc_normal_(module.weight, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
