"""Invariants of the backbone that must hold for every configuration."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tabrasa.backbone import Encoder, EncoderConfig

DIM, HEADS, N = 32, 4, 8


def tiny(**overrides: object) -> Encoder:
    return Encoder(EncoderConfig(dim=DIM, depth=2, heads=HEADS, **overrides)).eval()  # type: ignore[arg-type]


@pytest.mark.parametrize("positions", ["none", "learned", "sinusoidal", "rotary"])
@pytest.mark.parametrize("placement", ["pre", "post"])
@pytest.mark.parametrize("causal", [False, True])
def test_padding_never_changes_real_tokens(positions: str, placement: str, causal: bool) -> None:
    enc = tiny(positions=positions, norm_placement=placement, causal=causal)
    x = torch.randn(2, N, DIM)
    padded = torch.cat([x, torch.randn(2, 5, DIM) * 100], dim=1)
    mask = torch.zeros(2, N + 5, dtype=torch.bool)
    mask[:, :N] = True
    torch.testing.assert_close(enc(padded, mask)[:, :N], enc(x), atol=1e-5, rtol=1e-5)


def test_padding_in_a_mixed_batch_matches_each_sequence_alone() -> None:
    enc = tiny()
    a, b = torch.randn(1, N, DIM), torch.randn(1, 3, DIM)
    batch = torch.cat([a, F.pad(b, (0, 0, 0, N - 3))])
    mask = torch.tensor([[True] * N, [True] * 3 + [False] * (N - 3)])
    out = enc(batch, mask)
    torch.testing.assert_close(out[0:1], enc(a), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out[1:2, :3], enc(b), atol=1e-5, rtol=1e-5)
    assert torch.all(out[1, 3:] == 0), "padding positions are zeroed"


@pytest.mark.parametrize("causal", [False, True])
def test_fully_padded_sequence_gives_no_nan(causal: bool) -> None:
    enc = tiny(causal=causal)
    x = torch.randn(2, N, DIM, requires_grad=True)
    mask = torch.ones(2, N, dtype=torch.bool)
    mask[1] = False
    out = enc(x, mask)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(x.grad).all()
    assert torch.all(out[1] == 0)


def test_without_positions_permuting_tokens_permutes_outputs() -> None:
    enc = tiny(positions="none")
    x = torch.randn(2, N, DIM)
    perm = torch.randperm(N)
    torch.testing.assert_close(enc(x[:, perm]), enc(x)[:, perm], atol=1e-5, rtol=1e-5)


def test_with_positions_order_matters() -> None:
    enc = tiny(positions="learned")
    x = torch.randn(1, N, DIM)
    perm = torch.arange(N).flip(0)
    assert not torch.allclose(enc(x[:, perm]), enc(x)[:, perm], atol=1e-3)


def test_attention_equals_explicit_softmax_formula() -> None:
    enc = tiny(positions="none")
    attn = enc.blocks[0].attn
    x = torch.randn(2, N, DIM)
    mask = torch.tensor([[True] * N, [True] * 5 + [False] * 3])
    from tabrasa.backbone.masking import AttentionMask

    got = attn(x, AttentionMask.build(mask, causal=False))
    q, k, v = attn.qkv(x).view(2, N, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
    scores = q @ k.transpose(-1, -2) / math.sqrt(DIM // HEADS)  # (B, H, N, N)
    scores = scores.masked_fill(~mask[:, None, None, :], float("-inf"))
    expected = (scores.softmax(-1) @ v).transpose(1, 2).reshape(2, N, DIM)
    torch.testing.assert_close(got, attn.proj(expected), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_block_follows_its_norm_placement(placement: str) -> None:
    enc = tiny(positions="none", norm_placement=placement)
    block = enc.blocks[0]
    x = torch.randn(2, N, DIM)
    from tabrasa.backbone.masking import AttentionMask

    m = AttentionMask.build(None, causal=False)
    if placement == "pre":
        h = x + block.attn(block.norm1(x), m)
        expected = h + block.mlp(block.norm2(h))
    else:
        h = block.norm1(x + block.attn(x, m))
        expected = block.norm2(h + block.mlp(h))
    torch.testing.assert_close(block(x, m), expected)
    assert isinstance(enc.norm, torch.nn.LayerNorm) == (placement == "pre")


@pytest.mark.parametrize("positions", ["learned", "rotary"])
def test_causal_mask_blocks_the_future(positions: str) -> None:
    enc = tiny(causal=True, positions=positions)
    x = torch.randn(1, N, DIM)
    changed = x.clone()
    changed[:, 5:] = torch.randn(1, N - 5, DIM)
    torch.testing.assert_close(enc(changed)[:, :5], enc(x)[:, :5])
    assert not torch.allclose(enc(changed)[:, 5:], enc(x)[:, 5:])


def test_bidirectional_sees_the_future() -> None:
    enc = tiny(causal=False)
    x = torch.randn(1, N, DIM)
    changed = x.clone()
    changed[:, -1] = torch.randn(DIM) * 10
    assert (enc(changed)[:, 0] - enc(x)[:, 0]).abs().max() > 1e-4


def test_rotary_scores_depend_only_on_offset() -> None:
    from tabrasa.backbone.positions import RotaryPositions

    rotation = RotaryPositions(head_dim=8, max_len=16)(16)
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)
    qs, ks = rotation(q.expand(1, 1, 16, 8).contiguous(), k.expand(1, 1, 16, 8).contiguous())
    scores = (qs @ ks.transpose(-1, -2))[0, 0]
    torch.testing.assert_close(scores[2, 5], scores[7, 10])
    torch.testing.assert_close(scores[9, 3], scores[12, 6])


def test_gradient_checkpointing_gives_same_outputs_and_gradients() -> None:
    torch.manual_seed(1)
    plain = tiny().train()
    torch.manual_seed(1)
    ckpt = tiny(checkpointing=True).train()
    x = torch.randn(2, N, DIM)
    for enc in (plain, ckpt):
        enc(x).pow(2).sum().backward()
    torch.testing.assert_close(ckpt(x), plain(x))
    for (name, p), (_, q) in zip(plain.named_parameters(), ckpt.named_parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, msg=name)


def test_rotary_tables_are_buffers_moved_with_the_model_but_never_saved() -> None:
    enc = tiny(positions="rotary")
    buffers = dict(enc.named_buffers())
    assert set(buffers) == {"rotary.cos", "rotary.sin"}  # one table shared by every block, not one per block
    assert not any("rotary" in name for name in enc.state_dict())
    assert enc.double().rotary.cos.dtype == torch.float64


@pytest.mark.parametrize(
    ("activation", "reference"),
    [
        ("gelu", F.gelu),
        ("gelu_tanh", lambda h: F.gelu(h, approximate="tanh")),
        ("relu", F.relu),
        ("silu", F.silu),
    ],
)
def test_activation_switch_selects_the_function(activation: str, reference) -> None:  # type: ignore[no-untyped-def]
    mlp = tiny(activation=activation, mlp_ratio=2.0).blocks[0].mlp
    x = torch.randn(2, N, DIM)
    torch.testing.assert_close(mlp(x), mlp.fc2(reference(mlp.fc1(x))))


def test_bias_false_removes_every_bias_and_qkv_bias_only_the_projection_of_q_k_v() -> None:
    no_bias = tiny(bias=False, qk_norm=True, input_norm=True)
    assert not [name for name, _ in no_bias.named_parameters() if name.endswith("bias")]
    qkv_only = tiny(qkv_bias=False)
    biases = {name for name, _ in qkv_only.named_parameters() if name.endswith("bias")}
    assert not any("qkv" in name for name in biases)
    assert {"blocks.0.attn.proj.bias", "blocks.0.mlp.fc1.bias", "blocks.0.norm1.bias"} <= biases
    assert tiny().config.qkv_bias is True and tiny(bias=False).config.qkv_bias is False


def test_state_dict_names_are_the_checkpoint_format() -> None:
    enc = Encoder(EncoderConfig(dim=DIM, depth=1, heads=HEADS, input_norm=True))
    assert list(enc.state_dict()) == [
        "positions.weight",
        "norm_in.weight",
        "norm_in.bias",
        "blocks.0.norm1.weight",
        "blocks.0.norm1.bias",
        "blocks.0.attn.qkv.weight",
        "blocks.0.attn.qkv.bias",
        "blocks.0.attn.proj.weight",
        "blocks.0.attn.proj.bias",
        "blocks.0.norm2.weight",
        "blocks.0.norm2.bias",
        "blocks.0.mlp.fc1.weight",
        "blocks.0.mlp.fc1.bias",
        "blocks.0.mlp.fc2.weight",
        "blocks.0.mlp.fc2.bias",
        "norm.weight",
        "norm.bias",
    ]


def test_state_dict_names_with_every_option_on() -> None:
    """LayerScale, registers and QK-norm use timm's block names, so timm's ViT blocks map one to one."""
    config = EncoderConfig(
        dim=DIM, depth=1, heads=HEADS, qkv_bias=False, layer_scale_init=0.1, register_tokens=2, qk_norm=True
    )
    names = {name: tuple(t.shape) for name, t in Encoder(config).state_dict().items()}
    assert list(names) == [
        "register_tokens",
        "positions.weight",
        "blocks.0.norm1.weight",
        "blocks.0.norm1.bias",
        "blocks.0.attn.qkv.weight",
        "blocks.0.attn.q_norm.weight",
        "blocks.0.attn.q_norm.bias",
        "blocks.0.attn.k_norm.weight",
        "blocks.0.attn.k_norm.bias",
        "blocks.0.attn.proj.weight",
        "blocks.0.attn.proj.bias",
        "blocks.0.ls1.gamma",
        "blocks.0.norm2.weight",
        "blocks.0.norm2.bias",
        "blocks.0.mlp.fc1.weight",
        "blocks.0.mlp.fc1.bias",
        "blocks.0.mlp.fc2.weight",
        "blocks.0.mlp.fc2.bias",
        "blocks.0.ls2.gamma",
        "norm.weight",
        "norm.bias",
    ]
    assert names["register_tokens"] == (1, 2, DIM)
    assert names["blocks.0.ls1.gamma"] == names["blocks.0.ls2.gamma"] == (DIM,)
    assert names["blocks.0.attn.q_norm.weight"] == (DIM // HEADS,)


def test_bad_inputs_raise_clear_errors() -> None:
    enc = tiny(max_len=N)
    with pytest.raises(ValueError, match=r"expected \(batch, tokens, 32\)"):
        enc(torch.randn(2, N, 16))
    with pytest.raises(TypeError, match="expected a float tensor"):
        enc(torch.ones(2, N, DIM, dtype=torch.long))
    with pytest.raises(TypeError, match="expected bool"):
        enc(torch.randn(2, N, DIM), torch.ones(2, N))
    with pytest.raises(ValueError, match="mask has shape"):
        enc(torch.randn(2, N, DIM), torch.ones(2, N + 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="position table holds 8"):
        enc(torch.randn(1, N + 1, DIM))
    with pytest.raises(ValueError, match="0 tokens"):
        enc(torch.randn(1, 0, DIM))


def test_config_validates_itself() -> None:
    with pytest.raises(ValueError, match="not divisible by heads"):
        EncoderConfig(dim=30, heads=4)
    with pytest.raises(ValueError, match="norm_placement"):
        EncoderConfig(norm_placement="middle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="even head width"):
        EncoderConfig(dim=12, heads=4, positions="rotary")
    assert EncoderConfig(norm_placement="post").final_norm is False
