"""Every attention kind against full attention where they must agree, against brute-force references where
they differ, and the invariants the encoder promises: padding never changes real tokens, no NaN, weights load
across kinds."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import tabrasa.backbone
from tabrasa.backbone import AttentionConfig, AttentionMask, Encoder, EncoderConfig, TokenGrid
from tabrasa.backbone.axial_attention import AxialAttention
from tabrasa.backbone.config import AttentionKind
from tabrasa.backbone.full_attention import FullAttention
from tabrasa.backbone.local_attention import LocalAttention
from tabrasa.backbone.lowrank_attention import LowRankAttention
from tabrasa.backbone.mixers import MIXERS

B, H, N, HD = 2, 2, 13, 8
MIXER_CLASSES = {
    "full": FullAttention,
    "local": LocalAttention,
    "lowrank": LowRankAttention,
    "axial": AxialAttention,
}


def qkv(n: int = N, requires_grad: bool = False) -> list[torch.Tensor]:
    return [torch.randn(B, H, n, HD, requires_grad=requires_grad) for _ in range(3)]


def encoder(kind: str, max_len: int = 64, **attention: int) -> Encoder:
    config = EncoderConfig(
        dim=32, depth=2, heads=4, max_len=max_len, attention=AttentionConfig(kind=kind, **attention)
    )
    return Encoder(config).eval()


def reference_band(q, k, v, window: int, global_tokens: int, key_mask=None, causal: bool = False):
    """Local attention written as the masked N×N matrix it must equal."""
    n = q.shape[-2]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    allowed = ((i - j).abs() <= window) | (j < global_tokens) | (i < global_tokens)
    if causal:
        allowed = allowed & (j <= i)
    if key_mask is not None:
        allowed = allowed & key_mask[:, None, None, :] | (i == j)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)


@pytest.mark.parametrize("global_tokens", [0, 2])
@pytest.mark.parametrize("causal", [False, True])
def test_local_with_a_window_covering_the_sequence_is_full_attention(
    global_tokens: int, causal: bool
) -> None:
    q, k, v = qkv()
    mask = AttentionMask.build(None, causal)
    expected = FullAttention()(q, k, v, mask)
    torch.testing.assert_close(LocalAttention(N, global_tokens)(q, k, v, mask), expected)
    torch.testing.assert_close(LocalAttention(4 * N, global_tokens)(q, k, v, mask), expected)


@pytest.mark.parametrize("window", [1, 2, 3, 5])
@pytest.mark.parametrize("global_tokens", [0, 1, 3])
@pytest.mark.parametrize("causal", [False, True])
def test_local_equals_the_masked_band_it_stands_for(window: int, global_tokens: int, causal: bool) -> None:
    q, k, v = qkv()
    key_mask = torch.ones(B, N, dtype=torch.bool)
    key_mask[0, 9:] = False
    mask = AttentionMask.build(key_mask, causal)
    out = LocalAttention(window, global_tokens)(q, k, v, mask)
    expected = reference_band(q, k, v, window, global_tokens, mask.key_mask, causal)
    torch.testing.assert_close(out[0, :, :9], expected[0, :, :9])
    torch.testing.assert_close(out[1], expected[1])


def test_local_never_builds_an_n_by_n_matrix() -> None:
    n, window = 512, 16

    class LargestTensor(TorchDispatchMode):
        largest = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, tuple | list) else [out]:
                if isinstance(t, torch.Tensor):
                    LargestTensor.largest = max(LargestTensor.largest, t.numel())
            return out

    q, k, v = (torch.randn(1, 1, n, 4, requires_grad=True) for _ in range(3))
    with LargestTensor():
        LocalAttention(window, global_tokens=1)(q, k, v, AttentionMask.build(None, False)).sum().backward()
    assert LargestTensor.largest <= n * 3 * (window + 1)  # blockwise: (n/w) × w × (3w + g), not n × n
    assert LargestTensor.largest < n * n // 8


def test_lowrank_at_full_rank_with_identity_projections_is_full_attention() -> None:
    full, lowrank = encoder("full", max_len=16), encoder("lowrank", rank=16, max_len=16)
    report = lowrank.load_state_dict(full.state_dict(), strict=False)
    assert not report.unexpected_keys
    assert set(report.missing_keys) == {
        f"blocks.{i}.attn.mixer.{p}" for i in range(2) for p in ("key_proj", "value_proj")
    }
    with torch.no_grad():
        for block in lowrank.blocks:
            block.attn.mixer.key_proj.copy_(torch.eye(16))
            block.attn.mixer.value_proj.copy_(torch.eye(16))
    x = torch.randn(B, 16, 32)
    torch.testing.assert_close(lowrank(x), full(x))


def test_local_and_axial_load_full_weights_strictly_and_match_where_they_should() -> None:
    full = encoder("full")
    x = torch.randn(B, 12, 32)
    local, axial = encoder("local", window=12, global_tokens=1), encoder("axial")
    local.load_state_dict(full.state_dict())
    axial.load_state_dict(full.state_dict())
    torch.testing.assert_close(local(x), full(x))
    # A grid of one row (or one column) without prefix: the row pass is full attention, the column pass
    # has a single key per query, so axial attention equals full attention.
    torch.testing.assert_close(axial(x, grid=TokenGrid(1, 12)), full(x))
    torch.testing.assert_close(axial(x, grid=TokenGrid(12, 1)), full(x))


def reference_axial(q, k, v, grid: TokenGrid, key_mask):
    """Row pass then column pass, one query at a time, with prefix tokens as documented."""
    P, R, C = grid.prefix, grid.height, grid.width

    def attend(qi, keys, values, ok):
        scores = (keys @ qi) / HD**0.5
        return torch.softmax(scores.masked_fill(~ok, float("-inf")), 0) @ values

    out = torch.zeros_like(q)
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            ok = key_mask[b]
            row = torch.zeros(R, C, HD)
            for r in range(R):
                for c in range(C):
                    idx = list(range(P)) + [P + r * C + j for j in range(C)]
                    own = torch.tensor([i == P + r * C + c for i in idx])
                    row[r, c] = attend(q[b, h, P + r * C + c], k[b, h, idx], v[b, h, idx], ok[idx] | own)
            for r in range(R):
                for c in range(C):
                    idx = list(range(P)) + [P + i * C + c for i in range(R)]
                    own = torch.tensor([i == P + r * C + c for i in idx])
                    values = torch.cat((v[b, h, :P], row[:, c]))
                    out[b, h, P + r * C + c] = attend(
                        q[b, h, P + r * C + c], k[b, h, idx], values, ok[idx] | own
                    )
            for p in range(P):
                out[b, h, p] = attend(q[b, h, p], k[b, h], v[b, h], ok)
    return out


@pytest.mark.parametrize("prefix", [0, 1, 2])
def test_axial_matches_its_reference_with_prefix_and_padding(prefix: int) -> None:
    grid = TokenGrid(3, 4, prefix)
    n = prefix + grid.size
    q, k, v = qkv(n)
    key_mask = torch.ones(B, n, dtype=torch.bool)
    key_mask[0, prefix + 9 :] = False  # the last frames of a shorter example
    key_mask[1, prefix + 1] = False
    mask = AttentionMask.build(key_mask, False, grid)
    out = AxialAttention()(q, k, v, mask)
    torch.testing.assert_close(out, reference_axial(q, k, v, grid, mask.key_mask))


@pytest.mark.parametrize(
    ("kind", "attention", "grid"),
    [
        ("full", {}, None),
        ("local", {"window": 2, "global_tokens": 1}, None),
        ("local", {"window": 2}, None),
        ("lowrank", {"rank": 4, "max_len": 16}, None),
        ("axial", {}, TokenGrid(3, 4, 1)),
        ("axial", {}, TokenGrid(13, 1)),
    ],
)
def test_fully_padded_rows_give_no_nan(kind: str, attention: dict, grid: TokenGrid | None) -> None:
    model = encoder(kind, **attention).train()
    x = torch.randn(B, 13, 32, requires_grad=True)
    mask = torch.zeros(B, 13, dtype=torch.bool)
    mask[1, :3] = True  # row 0 entirely padding, row 1 three real tokens far from most padded ones
    out = model(x, mask, grid=grid)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(x.grad).all()
    assert out[0].abs().sum() == 0


def test_lowrank_rejects_longer_inputs_and_causality_with_the_fix() -> None:
    model = encoder("lowrank", rank=4, max_len=8)
    with pytest.raises(ValueError, match=r"9 tokens.*position table holds 8.*raise EncoderConfig.max_len"):
        model(torch.randn(1, 9, 32))
    with pytest.raises(ValueError, match=r"9 tokens.*projections span 8.*raise max_len"):
        model.blocks[0].attn.mixer(*qkv(9), AttentionMask.build(None, False))
    q, k, v = qkv(8)
    with pytest.raises(ValueError, match="cannot be causal"):
        LowRankAttention(8, 4)(q, k, v, AttentionMask.build(None, True))


def test_axial_needs_a_grid_that_covers_the_tokens() -> None:
    model = encoder("axial")
    with pytest.raises(ValueError, match="needs the token grid"):
        model(torch.randn(1, 12, 32))
    with pytest.raises(ValueError, match=r"grid holds prefix 1 \+ 3×4 = 13"):
        model(torch.randn(1, 12, 32), grid=TokenGrid(3, 4, 1))


@pytest.mark.parametrize(
    ("kind", "attention", "grid"),
    [
        ("local", {"window": 3}, None),
        ("lowrank", {"rank": 8, "max_len": 16}, None),
        ("axial", {}, TokenGrid(3, 4)),
    ],
)
def test_bf16_autocast_stays_close_to_fp32(kind: str, attention: dict, grid: TokenGrid | None) -> None:
    model = encoder(kind, **attention)
    x = torch.randn(B, 12, 32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = model(x, grid=grid)
    torch.testing.assert_close(low.float(), model(x, grid=grid), atol=0.1, rtol=0.05)


@pytest.mark.parametrize("kind", ["lowrank", "axial"])
def test_config_rejects_causal_kinds_that_have_no_order(kind: str) -> None:
    with pytest.raises(ValueError, match="cannot be causal"):
        EncoderConfig(dim=32, heads=4, causal=True, attention=AttentionConfig(kind=kind))


def test_one_module_calls_the_fused_kernel() -> None:
    package = Path(tabrasa.backbone.__file__).parent
    callers = sorted(p.name for p in package.glob("*.py") if "scaled_dot_product_attention(" in p.read_text())
    assert callers == ["sdpa.py"]


def test_every_attention_kind_has_a_mixer_and_every_mixer_a_kind() -> None:
    assert set(MIXERS) == set(get_args(AttentionKind))
    for kind in get_args(AttentionKind):
        config = EncoderConfig(dim=32, heads=4, max_len=16, attention=AttentionConfig(kind=kind))
        assert type(Encoder(config).blocks[0].attn.mixer) is MIXER_CLASSES[kind]
