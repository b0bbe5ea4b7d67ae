"""The explicit-softmax path that returns attention weights gives the fused path's outputs, for every kind."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from tabrasa.backbone import AttentionMask, Encoder, EncoderConfig, TokenGrid
from tabrasa.backbone.axial_attention import AxialAttention
from tabrasa.backbone.full_attention import FullAttention
from tabrasa.backbone.local_attention import LocalAttention
from tabrasa.backbone.lowrank_attention import LowRankAttention

DIM, HEADS = 32, 4
GRID = TokenGrid(3, 4, prefix=1)  # CLS + a 3×4 grid: 13 tokens


def _inputs(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(2, n, DIM)
    mask = torch.ones(2, n, dtype=torch.bool)
    mask[1, -4:] = False  # the second example is padded
    return x, mask


ENCODERS: dict[str, dict[str, Any]] = {
    "full, padding": {},
    "full, causal": {"causal": True},
    "full, rotary": {"positions": "rotary"},
    "full, registers": {"register_tokens": 2},
    "full, qk_norm, post-LN": {"qk_norm": True, "norm_placement": "post"},
    "local": {"attention": {"kind": "local", "window": 2, "global_tokens": 1}},
    "local, causal": {"attention": {"kind": "local", "window": 2}, "causal": True},
    "lowrank": {"attention": {"kind": "lowrank", "rank": 4}},
    "axial": {"attention": {"kind": "axial"}},
    "axial, registers": {"attention": {"kind": "axial"}, "register_tokens": 2},
}


@pytest.mark.parametrize("name", ENCODERS)
def test_encoder_outputs_equal_with_and_without_weights(name: str) -> None:
    options = ENCODERS[name]
    encoder = Encoder(EncoderConfig(dim=DIM, depth=2, heads=HEADS, max_len=32, **options)).eval()
    axial = options.get("attention", {}).get("kind") == "axial"
    x, mask = _inputs(1 + GRID.size if axial else 9)
    grid = GRID if axial else None
    fused = encoder(x, mask, grid=grid)
    explicit, weights = encoder(x, mask, grid=grid, return_attention=True)
    torch.testing.assert_close(explicit, fused, atol=1e-6, rtol=0)
    n = x.shape[1] + encoder.config.register_tokens
    assert [tuple(w.shape) for w in weights] == [(2, HEADS, n, n)] * 2


def test_a_wrong_explicit_path_is_caught() -> None:
    """Counter-test: weights from another input do not reproduce the outputs, so the check above can fail."""
    encoder = Encoder(EncoderConfig(dim=DIM, depth=1, heads=HEADS, max_len=32)).eval()
    x, mask = _inputs(9)
    _, weights = encoder(x, mask, return_attention=True)
    _, other = encoder(x.flip(1), mask, return_attention=True)
    assert not torch.allclose(weights[0], other[0], atol=1e-3)


def _qkv(n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.randn(2, HEADS, n, 8), torch.randn(2, HEADS, n, 8), torch.randn(2, HEADS, n, 8)


MIXERS = {
    "full": (lambda: FullAttention(), None),
    "local": (lambda: LocalAttention(window=2, global_tokens=1), None),
    "lowrank": (lambda: LowRankAttention(max_len=16, rank=4), None),
    "axial": (lambda: AxialAttention(), GRID),
}


@pytest.mark.parametrize("kind", MIXERS)
def test_mixer_weights_reproduce_its_outputs_as_weights_at_values(kind: str) -> None:
    make, grid = MIXERS[kind]
    mixer = make().eval()
    n = 13
    q, k, v = _qkv(n)
    key_mask = torch.ones(2, n, dtype=torch.bool)
    key_mask[1, -4:] = False
    mask = AttentionMask.build(key_mask, causal=False, grid=grid)
    fused = mixer(q, k, v, mask)
    _, weights = mixer.forward_with_weights(q, k, v, mask)
    assert weights.shape == (2, HEADS, n, n)
    torch.testing.assert_close(weights @ v, fused, atol=1e-6, rtol=0)
    # Padded keys receive nothing from any real query.
    assert torch.all(weights[1, :, : n - 4, n - 4 :] == 0)


def test_local_weights_stay_inside_the_window() -> None:
    mixer = LocalAttention(window=2, global_tokens=0).eval()
    q, k, v = _qkv(12)
    _, weights = mixer.forward_with_weights(q, k, v, AttentionMask.build(None, causal=False))
    offsets = (torch.arange(12)[:, None] - torch.arange(12)[None, :]).abs()
    assert torch.all(weights[..., offsets > 2] == 0)
    assert torch.all(weights[..., offsets <= 2] > 0)
