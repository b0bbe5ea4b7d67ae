"""Inductive-bias baselines behind the Encoder contract: shapes, padding, grids, matched sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml
from jsonargparse import ArgumentParser

from tabrasa.backbone import (
    Backbone,
    PatchGridCNN,
    PixelCNN,
    SequenceCNN,
    SequenceLSTM,
    SpectrogramCNN,
    TokenGrid,
)

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "backbone"
BASELINES = [
    "sequence_cnn.yaml",
    "sequence_lstm.yaml",
    "patch_grid_cnn.yaml",
    "pixel_cnn.yaml",
    "spectrogram_cnn.yaml",
]
# The width every learning-curve arm runs at (benchmarks' StandardPlan.width), set where each YAML keeps it.
CURVE_WIDTH = 64


def build(name: str, width: int | None = None) -> torch.nn.Module:
    """The backbone a YAML preset names, with its hidden width set to `width` as the learning curves do
    (the transformer's `config.dim`, each baseline's `dim`); None keeps the YAML's 128."""
    spec = yaml.safe_load((CONFIGS / name).read_text())
    if width is not None:
        args = spec["init_args"]
        args.get("config", args)["dim"] = width
    parser = ArgumentParser()
    parser.add_argument("--backbone", type=torch.nn.Module)
    cfg = parser.parse_object({"backbone": spec})
    return parser.instantiate_classes(cfg).backbone


def count(model: torch.nn.Module) -> int:
    """Backbone parameters only, for every arm: the embedder is the tokenizer's and the head the task's."""
    return sum(p.numel() for p in model.parameters())


def matched(baseline: torch.nn.Module, transformer: torch.nn.Module) -> bool:
    return 0.8 <= count(baseline) / count(transformer) <= 1.2


@pytest.mark.parametrize("name", BASELINES)
def test_parameter_counts_within_20_percent_of_the_transformer(name: str) -> None:
    transformer, baseline = build("small.yaml"), build(name)
    assert matched(baseline, transformer), (
        f"{name}: {count(baseline):,} vs transformer {count(transformer):,}"
    )


@pytest.mark.parametrize("name", BASELINES)
def test_parameter_counts_match_at_the_learning_curve_width(name: str) -> None:
    transformer, baseline = build("small.yaml", CURVE_WIDTH), build(name, CURVE_WIDTH)
    assert transformer.dim == baseline.dim == CURVE_WIDTH
    assert matched(baseline, transformer), (
        f"{name}: {count(baseline):,} vs transformer {count(transformer):,}"
    )


def test_a_mis_sized_cnn_fails_the_parameter_check() -> None:
    """The counter-test: a fixed hidden width that does not scale with dim (the patch-grid CNN's 96 at 64
    wide, 1.7× the transformer) and a pixel CNN four times too wide are caught."""
    transformer = build("small.yaml", CURVE_WIDTH)
    assert not matched(PatchGridCNN(CURVE_WIDTH, hidden=96), transformer)
    assert not matched(PixelCNN(CURVE_WIDTH, channels=[32, 64, 128]), transformer)
    assert matched(PatchGridCNN(CURVE_WIDTH), transformer)


@pytest.mark.parametrize("model", [SequenceCNN(32, 2, 3), SequenceLSTM(32, 2)], ids=["cnn", "lstm"])
def test_sequence_baselines_ignore_padding(model: torch.nn.Module) -> None:
    model.eval()
    x = torch.randn(2, 8, 32)
    padded = torch.cat([x, torch.randn(2, 4, 32)], dim=1)
    mask = torch.ones(2, 12, dtype=torch.bool)
    mask[:, 8:] = False
    out = model(padded, mask)
    torch.testing.assert_close(out[:, :8], model(x), atol=1e-5, rtol=1e-5)
    assert torch.all(out[:, 8:] == 0)


def test_sequence_baselines_zero_a_fully_padded_row_and_keep_the_other() -> None:
    for model in (SequenceCNN(32, 1, 3).eval(), SequenceLSTM(32, 1).eval()):
        x = torch.randn(2, 4, 32)
        out = model(x, torch.tensor([[True] * 4, [False] * 4]))
        assert torch.isfinite(out).all() and torch.all(out[1] == 0)
        torch.testing.assert_close(out[0], model(x[:1])[0], atol=1e-5, rtol=1e-5)


def test_lstm_padded_path_matches_the_packed_one_in_outputs_and_gradients() -> None:
    torch.manual_seed(0)
    model = SequenceLSTM(16, layers=3, dropout=0.0)
    x = torch.randn(5, 9, 16, requires_grad=True)
    lengths = torch.tensor([9, 1, 4, 0, 7])  # uneven, a one-token row and an empty one
    mask = torch.arange(9)[None] < lengths[:, None]
    results = []
    for path in (model.packed, model.padded):
        out = model.norm(path(x, lengths) + x) * mask[..., None]
        grads = torch.autograd.grad(out.pow(2).sum(), [x, *model.parameters()])
        results.append((out, grads))
    (packed, packed_grads), (padded, padded_grads) = results
    torch.testing.assert_close(padded, packed, atol=1e-5, rtol=1e-5)
    for a, b in zip(padded_grads, packed_grads, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    # counter-test: without the reversal within lengths, the backward direction reads padding first
    unaware, exact = model.padded(x, torch.full((5,), 9)), model.packed(x, lengths)
    torch.testing.assert_close(unaware[0], exact[0])  # a full-length row needs no reversal
    assert (unaware[2, :4] - exact[2, :4]).abs().max() > 1e-3


def test_lstm_is_order_sensitive_and_cnn_is_local() -> None:
    cnn = SequenceCNN(16, blocks=1, kernel_size=3).eval()
    x = torch.randn(1, 12, 16)
    changed = x.clone()
    changed[:, -1] = torch.randn(16)
    # one block = two width-3 convolutions: token 0 sees tokens 0..2 only
    torch.testing.assert_close(cnn(changed)[:, :9], cnn(x)[:, :9])
    lstm = SequenceLSTM(16, 1).eval()
    assert (lstm(changed)[:, 0] - lstm(x)[:, 0]).abs().max() > 1e-6  # the backward direction carries it


def test_patch_grid_cnn_reads_the_grid_and_fills_prefix_tokens() -> None:
    model = PatchGridCNN(32, blocks=1, hidden=16).eval()
    x = torch.randn(2, 1 + 12, 32)
    grid = TokenGrid(height=3, width=4, prefix=1)
    out = model(x, None, grid=grid)
    other_prefix = x.clone()
    other_prefix[:, 0] = torch.randn(2, 32)
    # The prefix token's input is ignored: its output is the pooled grid, identical for every prefix.
    torch.testing.assert_close(model(other_prefix, None, grid=grid), out)
    # Cells are convolved as a 3×4 image: a far cell (0, 0) is unaffected by a change at (2, 3).
    corner = x.clone()
    corner[:, 12] = torch.randn(2, 32)
    changed = model(corner, None, grid=grid)
    torch.testing.assert_close(changed[:, 1], out[:, 1])
    assert (changed[:, 12] - out[:, 12]).abs().max() > 1e-3
    with pytest.raises(ValueError, match="use SequenceCNN or SequenceLSTM"):
        model(x, None)
    with pytest.raises(ValueError, match="grid says"):
        model(x, None, grid=TokenGrid(height=3, width=3, prefix=1))


def with_batchnorm_statistics(model: torch.nn.Module) -> torch.nn.Module:
    """The model in eval mode with running statistics other than 0 and 1, so BatchNorm is not the identity
    (a fresh one would hide a padded cell that BatchNorm's shift makes non-zero)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_()
                m.running_var.uniform_(0.5, 2.0)
    return model.eval()


PIXELS = TokenGrid(height=28, width=28, prefix=1)  # Fashion-MNIST with patch_size 1: 784 pixels and CLS


def test_pixel_cnn_is_local_before_pooling() -> None:
    """Three stages (strides 1, 2, 4): the final cell over pixels 0..3 sees pixels 0..18 of each side (a
    3×3 stem, two 3×3 convs per stage, two stride-2 3×3 convs), so pixel (27, 27) cannot reach token
    (0, 0); it does reach its own token and the CLS output, which is the mean of them all."""
    model = with_batchnorm_statistics(PixelCNN(16, dropout=0.0))
    x = torch.randn(1, 1 + 28 * 28, 16)
    out = model(x, None, grid=PIXELS)
    far = x.clone()
    far[:, -1] = 10 * torch.randn(16)  # the last pixel, (27, 27)
    changed = model(far, None, grid=PIXELS)
    torch.testing.assert_close(changed[:, 1], out[:, 1])  # pixel (0, 0)
    assert (changed[:, -1] - out[:, -1]).abs().max() > 1e-3
    assert (changed[:, 0] - out[:, 0]).abs().max() > 1e-6


def test_pixel_cnn_receptive_field_is_the_box_the_layers_give() -> None:
    model = with_batchnorm_statistics(PixelCNN(16, dropout=0.0))
    x = torch.randn(1, 1 + 28 * 28, 16, requires_grad=True)
    model(x, None, grid=PIXELS)[0, 1].sum().backward()  # token of pixel (0, 0)
    assert x.grad is not None
    reach = x.grad[0, 1:].abs().sum(-1).view(28, 28) > 0  # pixels token (0, 0) depends on
    rows, cols = reach.nonzero().unbind(1)
    assert int(rows.max()) == int(cols.max()) == 18, "the box 0..18 the layers give, no wider, no narrower"
    assert int(reach.sum()) == 19 * 19
    assert not bool(x.grad[0, 0].any()), "the CLS input is outside the grid and never read"


def test_pixel_cnn_mean_over_pixels_is_global_average_pooling() -> None:
    """Each final 7×7 cell fills its 4×4 block, so the mean over the 784 tokens is the mean over the 49
    cells; the CLS output is the normalised mean of the map."""
    model = with_batchnorm_statistics(PixelCNN(16, dropout=0.0))
    x = torch.randn(2, 1 + 28 * 28, 16)
    out = model(x, None, grid=PIXELS)
    cells = x[:, 1:].transpose(1, 2).reshape(2, 16, 28, 28)
    features, _ = model.forward_features(cells, torch.ones(2, 1, 28, 28))  # (2, 16, 7, 7)
    assert features.shape[-2:] == (7, 7) and model.stride == 4
    per_cell = model.norm(features.flatten(2).transpose(1, 2))  # (2, 49, 16)
    torch.testing.assert_close(out[:, 1:].mean(1), per_cell.mean(1), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out[:, 0], model.norm(features.mean((2, 3))), atol=1e-5, rtol=1e-5)


def test_spectrogram_cnn_ignores_the_padded_frames_of_a_shorter_clip() -> None:
    """Two clips of 13 and 9 frames × 6 mel bins in one batch: the shorter one's padded frames, full of
    noise, change none of its real outputs (its outputs alone are the reference), and are zero."""
    model = with_batchnorm_statistics(SpectrogramCNN(16, channels=8, blocks=2, dropout=0.0))
    frames, short, bins = 13, 9, 6
    x = torch.randn(2, 1 + frames * bins, 16)
    mask = torch.ones(2, 1 + frames * bins, dtype=torch.bool)
    mask[1, 1 + short * bins :] = False
    x[1, 1 + short * bins :] = 100 * torch.randn((frames - short) * bins, 16)
    out = model(x, mask, grid=TokenGrid(frames, bins, prefix=1))
    alone = model(x[1:, : 1 + short * bins], None, grid=TokenGrid(short, bins, prefix=1))
    torch.testing.assert_close(out[1, : 1 + short * bins], alone[0], atol=1e-5, rtol=1e-5)
    assert torch.all(out[1, 1 + short * bins :] == 0)
    # counter-test: the same noise read as real frames reaches the real ones (the last pooling window
    # holds frame 8 with three padded frames, and the convolutions spread it)
    unmasked = model(x, None, grid=TokenGrid(frames, bins, prefix=1))
    assert (unmasked[1, 1 : 1 + short * bins] - alone[0, 1:]).abs().max() > 1e-2


def test_spectrogram_cnn_pools_4_by_3_and_upsamples_back() -> None:
    model = with_batchnorm_statistics(SpectrogramCNN(16, dropout=0.0))
    assert model.channels == round(16 * 3 / 4) and model.pool == (4, 3)
    cells = torch.randn(1, 4, 101, 64)  # after the 1×1 convolution to stem_channels
    features, keep = model.forward_features(cells, torch.ones(1, 1, 101, 64))
    assert features.shape == (1, 16, 26, 22) and bool(keep.all())  # ⌈101/4⌉ × ⌈64/3⌉
    x = torch.randn(1, 101 * 64, 16)
    out = model(x, None, grid=TokenGrid(101, 64))
    assert out.shape == x.shape and torch.isfinite(out).all()
    grid = out.view(101, 64, 16)
    torch.testing.assert_close(grid[0, 0], grid[3, 2])  # one pooled cell fills its 4×3 block
    assert (grid[0, 0] - grid[4, 0]).abs().max() > 1e-4


@pytest.mark.parametrize("name", ["pixel_cnn", "spectrogram_cnn", "patch_grid_cnn"])
def test_grid_cnns_need_a_grid_and_name_the_tokenizer_that_gives_one(name: str) -> None:
    model, fix = {
        "pixel_cnn": (PixelCNN(16), r"ImageTokenizer\(patch_size=1\)"),
        "spectrogram_cnn": (SpectrogramCNN(16), r"AudioTokenizer\(patch_size=\[1, 1\]\)"),
        "patch_grid_cnn": (PatchGridCNN(16), "image patches"),
    }[name]
    assert isinstance(model, Backbone) and model.dim == 16
    x = torch.randn(1, 1 + 12, 16)
    with pytest.raises(ValueError, match=fix) as error:
        model(x, None)
    assert "use SequenceCNN or SequenceLSTM" in str(error.value)
    with pytest.raises(ValueError, match="grid says 1 \\+ 3×3"):
        model(x, None, grid=TokenGrid(3, 3, prefix=1))


@pytest.mark.parametrize(
    "make",
    [lambda: PixelCNN(16, channels=[4, 8]), lambda: SpectrogramCNN(16, channels=8), lambda: PatchGridCNN(16)],
    ids=["pixel_cnn", "spectrogram_cnn", "patch_grid_cnn"],
)
def test_grid_cnn_state_dict_round_trip(make: object) -> None:
    assert callable(make)
    source = with_batchnorm_statistics(make())
    x, grid = torch.randn(2, 1 + 8 * 6, 16), TokenGrid(8, 6, prefix=1)
    copy = make().eval()
    assert (copy(x, None, grid=grid) - source(x, None, grid=grid)).abs().max() > 1e-4, "fresh weights differ"
    result = copy.load_state_dict(source.state_dict())
    assert not result.missing_keys and not result.unexpected_keys
    torch.testing.assert_close(copy(x, None, grid=grid), source(x, None, grid=grid))


def test_pixel_cnn_refuses_channels_that_are_not_stage_widths() -> None:
    with pytest.raises(ValueError, match="one positive int per stage"):
        PixelCNN(16, channels=[8, 0])
    model = PixelCNN(16, channels=[4, 8])  # a last stage narrower than dim gets a 1×1 projection to it
    assert isinstance(model.proj, torch.nn.Conv2d) and model.stride == 2


def test_upsampling_by_the_padded_size_would_let_padding_move_real_outputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The counter-test of the padding test above: F.interpolate(size=...) rescales by the padded length,
    so a real frame of the short clip reads another pooled cell than it does alone."""
    import tabrasa.backbone.conv_blocks as module  # where the shared forward maps tokens to cells

    def rescaled(
        size: tuple[int, int], factor: tuple[int, int], coarse: tuple[int, int], device: torch.device
    ) -> torch.Tensor:
        rows = torch.arange(size[0], device=device) * coarse[0] // size[0]  # F.interpolate's nearest
        cols = torch.arange(size[1], device=device) * coarse[1] // size[1]
        return (rows[:, None] * coarse[1] + cols[None, :]).flatten()

    monkeypatch.setattr(module, "covering_cells", rescaled)
    model = with_batchnorm_statistics(SpectrogramCNN(16, channels=8, blocks=1, dropout=0.0))
    x = torch.randn(1, 13 * 6, 16)
    mask = torch.ones(1, 13 * 6, dtype=torch.bool)
    mask[0, 9 * 6 :] = False
    padded = model(x, mask, grid=TokenGrid(13, 6))
    alone = model(x[:, : 9 * 6], None, grid=TokenGrid(9, 6))
    assert (padded[0, : 9 * 6] - alone[0]).abs().max() > 1e-3
