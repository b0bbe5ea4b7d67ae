"""LayerScale, register tokens, QK-norm and the bias-free variants against timm's VisionTransformer.

A tiny timm ViT with every LayerNorm, gamma and register perturbed (so a wrong mapping cannot hide) is
copied into the Encoder by name with a strict load, and both run the same tokens: timm's blocks and final
norm after `_pos_embed`, the Encoder on the class token and patch tokens. Register outputs are dropped
from timm's sequence, as the Encoder drops them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
import torch
from timm.models.vision_transformer import VisionTransformer
from torch import nn

from tabrasa.backbone import Encoder, EncoderConfig

GRID, DIM, HEADS, DEPTH = 4, 32, 4, 2
# (timm VisionTransformer arguments, EncoderConfig fields) for each option.
OPTIONS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "layer_scale": ({"init_values": 0.1}, {"layer_scale_init": 0.1}),
    "registers": ({"reg_tokens": 2, "no_embed_class": True}, {"register_tokens": 2}),
    "qk_norm": ({"qk_norm": True}, {"qk_norm": True}),
    "no_qkv_bias": ({"qkv_bias": False}, {"qkv_bias": False}),
    "bias_free": (
        {"qkv_bias": False, "proj_bias": False, "norm_layer": partial(nn.LayerNorm, eps=1e-6, bias=False)},
        {"bias": False},
    ),
    "dinov2_reg_like": (
        {"init_values": 0.1, "reg_tokens": 2, "no_embed_class": True, "qk_norm": True, "qkv_bias": False},
        {"layer_scale_init": 0.1, "register_tokens": 2, "qk_norm": True, "qkv_bias": False},
    ),
}


def reference(**timm_args: Any) -> VisionTransformer:
    torch.manual_seed(0)
    vit = VisionTransformer(
        img_size=GRID * 8, patch_size=8, embed_dim=DIM, depth=DEPTH, num_heads=HEADS, num_classes=0,
        **timm_args,
    )  # fmt: skip
    with torch.no_grad():
        for p in vit.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return vit.eval()


def encoder(**fields: Any) -> Encoder:
    config = EncoderConfig(
        dim=DIM, depth=DEPTH, heads=HEADS, norm_eps=1e-6, max_len=1 + GRID * GRID, positions="learned",
        **fields,
    )  # fmt: skip
    return Encoder(config).eval()


def timm_to_encoder(vit: VisionTransformer) -> dict[str, torch.Tensor]:
    """timm ViT → Encoder state dict: blocks and final norm share names; the class token's position row is
    zero when timm keeps it out of the table (no_embed_class)."""
    pos = vit.pos_embed[0]  # (rows, D)
    if vit.no_embed_class:
        pos = torch.cat((pos.new_zeros(1, DIM), pos))
    mapped = {"positions.weight": pos}
    if vit.reg_token is not None:
        mapped["register_tokens"] = vit.reg_token
    for name, tensor in vit.state_dict().items():
        if name.startswith(("blocks.", "norm.")):
            mapped[name] = tensor
    return mapped


def outputs(vit: VisionTransformer, enc: Encoder, strict: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    enc.load_state_dict(timm_to_encoder(vit), strict=strict)
    images = torch.randn(2, 3, GRID * 8, GRID * 8)
    with torch.no_grad():
        patches = vit.patch_embed(images)  # (B, 16, D)
        expected = vit.norm(vit.blocks(vit._pos_embed(patches)))  # (B, 1 + R + 16, D)
        R = vit.num_reg_tokens
        expected = torch.cat((expected[:, :1], expected[:, 1 + R :]), dim=1)  # (B, 17, D): registers dropped
        tokens = torch.cat((vit.cls_token.expand(2, -1, -1), patches), dim=1)  # (B, 17, D)
        return enc(tokens), expected


@pytest.mark.parametrize("option", list(OPTIONS))
def test_option_matches_timm(option: str) -> None:
    timm_args, fields = OPTIONS[option]
    got, expected = outputs(reference(**timm_args), encoder(**fields))
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    ("option", "off"),
    [("layer_scale", {}), ("registers", {}), ("qk_norm", {}), ("dinov2_reg_like", {"qkv_bias": False})],
)
def test_without_the_option_the_outputs_differ(option: str, off: dict[str, Any]) -> None:
    """The counter-test: the same weights without the option give other outputs, so the parity above
    depends on the option being reproduced."""
    timm_args, _ = OPTIONS[option]
    got, expected = outputs(reference(**timm_args), encoder(**off), strict=False)
    assert (got - expected).abs().max() > 1e-2


@pytest.mark.parametrize("option", ["no_qkv_bias", "bias_free"])
def test_biases_the_encoder_lacks_are_refused_by_name(option: str) -> None:
    """With biases on, the Encoder expects keys the bias-free timm model does not have: the strict load names
    them rather than leaving zeros that would hide the difference."""
    with pytest.raises(RuntimeError, match=r"Missing key\(s\).*blocks\.0\.attn\.qkv\.bias"):
        outputs(reference(**OPTIONS[option][0]), encoder())
