"""The backbone's promises, checked for every attention kind, every option and every baseline:
padding never changes real tokens' outputs, and without positions permuting tokens permutes outputs."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from tabrasa.backbone import (
    AttentionConfig,
    Encoder,
    EncoderConfig,
    PatchGridCNN,
    PixelCNN,
    SequenceCNN,
    SequenceLSTM,
    SpectrogramCNN,
    TokenGrid,
)

B, DIM, HEADS = 2, 32, 4
OPTIONS: dict[str, dict[str, Any]] = {
    "plain": {},
    "layer_scale": {"layer_scale_init": 0.5},
    "registers": {"register_tokens": 2},
    "qk_norm": {"qk_norm": True},
    "bias_free": {"bias": False},
    "all": {"layer_scale_init": 0.5, "register_tokens": 2, "qk_norm": True, "qkv_bias": False},
}
KINDS: dict[str, dict[str, int]] = {
    "full": {},
    "local": {"window": 2, "global_tokens": 1},
    "lowrank": {"rank": 4},
    "axial": {},
}


def encoder(kind: str, positions: str = "learned", **options: Any) -> Encoder:
    torch.manual_seed(0)
    config = EncoderConfig(
        dim=DIM, depth=2, heads=HEADS, max_len=16, positions=positions,
        attention=AttentionConfig(kind=kind, **KINDS[kind]), **options,
    )  # fmt: skip
    model = Encoder(config).eval()
    with torch.no_grad():  # registers start at N(0, 1e-6): make them large enough to matter
        if model.register_tokens is not None:
            model.register_tokens.normal_()
    return model


def grid_tokens(model: nn.Module, x: torch.Tensor, keep_cols: int | None = None) -> torch.Tensor:
    """Run a 1 + 3×4 grid of tokens whose last column may be padding, or only its first keep_cols columns."""
    mask = torch.ones(B, 13, dtype=torch.bool)
    mask[0, 1:].view(3, 4)[:, 3] = False  # example 0 is one column narrower
    if keep_cols is None:
        return model(x, mask, grid=TokenGrid(3, 4, prefix=1))
    cells = torch.arange(12).view(3, 4)[:, :keep_cols].flatten() + 1
    index = torch.cat((torch.zeros(1, dtype=torch.long), cells))
    return model(x[:, index], None, grid=TokenGrid(3, keep_cols, prefix=1))


def padding_is_invisible(model: nn.Module) -> None:
    """Right padding full of noise gives the real tokens the same outputs as the sequence alone."""
    x = torch.randn(1, 9, DIM)
    padded = torch.cat((x, 100 * torch.randn(1, 4, DIM)), dim=1).expand(B, -1, -1)
    mask = torch.ones(B, 13, dtype=torch.bool)
    mask[0, 9:] = False
    out = model(padded, mask)
    torch.testing.assert_close(out[0, :9], model(x)[0], atol=1e-5, rtol=1e-5)
    assert torch.all(out[0, 9:] == 0)


def grid_padding_is_invisible(model: nn.Module) -> None:
    """A padded grid column full of noise gives the same outputs as the narrower grid without it."""
    x = torch.randn(B, 13, DIM)
    noisy = x.clone()
    noisy[0, 1:].view(3, 4, DIM)[:, 3] = 100 * torch.randn(3, DIM)
    out = grid_tokens(model, noisy)
    narrow = grid_tokens(model, x, keep_cols=3)
    kept = torch.tensor([0] + [1 + r * 4 + c for r in range(3) for c in range(3)])
    torch.testing.assert_close(out[0, kept], narrow[0], atol=1e-5, rtol=1e-5)
    assert torch.all(out[0, 1:].view(3, 4, DIM)[:, 3] == 0)


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("kind", ["full", "local", "lowrank"])
def test_padding_never_changes_real_tokens(kind: str, option: str) -> None:
    padding_is_invisible(encoder(kind, **OPTIONS[option]))


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("kind", ["full", "axial"])
def test_grid_padding_never_changes_real_tokens(kind: str, option: str) -> None:
    grid_padding_is_invisible(encoder(kind, positions="none", **OPTIONS[option]))


@pytest.mark.parametrize("positions", ["sinusoidal", "rotary"])
def test_padding_never_changes_real_tokens_with_fixed_positions_and_registers(positions: str) -> None:
    padding_is_invisible(encoder("full", positions=positions, register_tokens=2))


@pytest.mark.parametrize(
    "model",
    [SequenceCNN(DIM, blocks=2, kernel_size=3), SequenceLSTM(DIM, layers=2)],
    ids=["sequence_cnn", "sequence_lstm"],
)
def test_padding_never_changes_real_tokens_in_sequence_baselines(model: nn.Module) -> None:
    torch.manual_seed(0)
    padding_is_invisible(model.eval())


@pytest.mark.parametrize(
    "make",
    [
        lambda: PatchGridCNN(DIM, blocks=2, hidden=16),
        lambda: PixelCNN(DIM, channels=[8, 16]),
        lambda: SpectrogramCNN(DIM, channels=8, blocks=2),
    ],
    ids=["patch_grid_cnn", "pixel_cnn", "spectrogram_cnn"],
)
def test_grid_padding_never_changes_real_tokens_in_the_grid_cnns(make: Any) -> None:
    torch.manual_seed(0)
    model = make().eval()
    with torch.no_grad():  # running statistics other than 0 and 1, so BatchNorm is not the identity
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_()
                m.running_var.uniform_(0.5, 2.0)
    grid_padding_is_invisible(model)


@pytest.mark.parametrize("option", list(OPTIONS))
def test_without_positions_permuting_tokens_permutes_outputs(option: str) -> None:
    model = encoder("full", positions="none", **OPTIONS[option])
    x = torch.randn(B, 12, DIM)
    perm = torch.randperm(12, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(model(x[:, perm]), model(x)[:, perm], atol=1e-5, rtol=1e-5)


def test_with_learned_positions_permuting_tokens_changes_outputs() -> None:
    """The counter-test: with positions, the same permutation is visible in the outputs."""
    model = encoder("full", **OPTIONS["all"])
    x = torch.randn(B, 12, DIM)
    perm = torch.randperm(12, generator=torch.Generator().manual_seed(0))
    assert (model(x[:, perm]) - model(x)[:, perm]).abs().max() > 1e-3


def test_with_learned_positions_a_token_permutation_is_the_same_function_and_the_same_training() -> None:
    """The permutation test's level (a), exactly: for a transformer with learned positions, a fixed
    permutation of the tokens of every example is undone by permuting the rows of the position table.
    The permuted table is as likely an initialisation as the original (rows are drawn i.i.d.), and every
    gradient step maps one run onto the other, so training on permuted tokens ends at the same accuracy.
    Only baselines that assume an order or a neighbourhood can tell the difference."""
    n = 12
    # float64: the two runs sum in other orders, and Adam's g/√v amplifies those last-bit differences
    model = encoder("full", **OPTIONS["all"]).train().double()
    twin = encoder("full", **OPTIONS["all"]).train().double()
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        twin.positions.weight[:n] = model.positions.weight[:n][perm]
    x, target = torch.randn(B, n, DIM, dtype=torch.float64), torch.randn(B, n, DIM, dtype=torch.float64)
    mask = torch.ones(B, n, dtype=torch.bool)
    mask[1, 9:] = False  # padding at the end of example 1, permuted along with its tokens
    optimisers = [torch.optim.AdamW(m.parameters(), lr=1e-2) for m in (model, twin)]
    for _ in range(3):
        for net, opt, inputs, goal, real in (
            (model, optimisers[0], x, target, mask),
            (twin, optimisers[1], x[:, perm], target[:, perm], mask[:, perm]),
        ):
            loss = ((net(inputs, real) - goal)[real] ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    out, out_twin = model.eval()(x, mask), twin.eval()(x[:, perm], mask[:, perm])
    real = mask[:, perm]
    torch.testing.assert_close(out_twin[real], out[:, perm][real], atol=1e-9, rtol=0)
    torch.testing.assert_close(twin.positions.weight[:n], model.positions.weight[:n][perm], atol=1e-9, rtol=0)
    assert (
        model.positions.weight[:n] - encoder("full", **OPTIONS["all"]).positions.weight[:n]
    ).abs().max() > 1e-3
