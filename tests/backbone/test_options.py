"""LayerScale and register tokens beyond timm parity: both norm placements, padding, gradients, rotary."""

from __future__ import annotations

import pytest
import torch

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.backbone.masking import AttentionMask

DIM, HEADS, N = 32, 4, 8


def tiny(**overrides: object) -> Encoder:
    torch.manual_seed(0)
    return Encoder(EncoderConfig(dim=DIM, depth=2, heads=HEADS, **overrides)).eval()  # type: ignore[arg-type]


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_layer_scale_scales_each_residual_branch(placement: str) -> None:
    block = tiny(norm_placement=placement, layer_scale_init=0.1, positions="none").blocks[0]
    with torch.no_grad():
        block.ls1.gamma.normal_()
        block.ls2.gamma.normal_()
    g1, g2 = block.ls1.gamma, block.ls2.gamma
    x, m = torch.randn(2, N, DIM), AttentionMask.build(None, causal=False)
    if placement == "pre":
        h = x + g1 * block.attn(block.norm1(x), m)
        expected = h + g2 * block.mlp(block.norm2(h))
    else:
        h = block.norm1(x + g1 * block.attn(x, m))
        expected = block.norm2(h + g2 * block.mlp(h))
    torch.testing.assert_close(block(x, m), expected)


def test_layer_scale_starts_at_its_init() -> None:
    gammas = [p for name, p in tiny(layer_scale_init=1e-5).named_parameters() if name.endswith("gamma")]
    assert len(gammas) == 4 and all(torch.all(g == 1e-5) for g in gammas)


def test_registers_leave_the_output_and_are_trained() -> None:
    enc = tiny(register_tokens=3).train()
    x = torch.randn(2, N, DIM)
    out = enc(x)
    assert out.shape == (2, N, DIM)
    out.pow(2).sum().backward()
    assert enc.register_tokens is not None and enc.register_tokens.grad is not None
    assert enc.register_tokens.grad.abs().sum() > 0


def test_registers_change_the_outputs_they_are_dropped_from() -> None:
    enc = tiny(register_tokens=2)
    x = torch.randn(2, N, DIM)
    before = enc(x)
    with torch.no_grad():
        enc.register_tokens.normal_()  # type: ignore[union-attr]
    assert (enc(x) - before).abs().max() > 1e-3


def test_a_fully_padded_sequence_with_registers_gives_zeros_not_nan() -> None:
    enc = tiny(register_tokens=2).train()
    x = torch.randn(2, N, DIM, requires_grad=True)
    mask = torch.ones(2, N, dtype=torch.bool)
    mask[1] = False
    out = enc(x, mask)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(x.grad).all()  # type: ignore[arg-type]
    assert torch.all(out[1] == 0)


def test_registers_are_not_rotated_and_tokens_keep_their_rotary_positions() -> None:
    enc = tiny(register_tokens=2, positions="rotary")
    assert enc.rotary is not None
    rotation, plain = enc.rotary(N, unrotated=2), enc.rotary(N)
    assert torch.all(rotation.cos[:2] == 1) and torch.all(rotation.sin[:2] == 0)
    torch.testing.assert_close(rotation.cos[2:], plain.cos)
    torch.testing.assert_close(rotation.sin[2:], plain.sin)


def test_embeddings_are_exempt_from_weight_decay() -> None:
    assert tiny(register_tokens=2).no_weight_decay() == {"positions.weight", "register_tokens"}
    assert tiny(positions="rotary").no_weight_decay() == set()
