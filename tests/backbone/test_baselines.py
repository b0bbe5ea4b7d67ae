"""Inductive-bias baselines behind the Encoder contract: shapes, padding, grids, matched sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml
from jsonargparse import ArgumentParser

from tabrasa.backbone import GridCNN, SequenceCNN, SequenceLSTM, TokenGrid

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "backbone"


def build(name: str) -> torch.nn.Module:
    parser = ArgumentParser()
    parser.add_argument("--backbone", type=torch.nn.Module)
    cfg = parser.parse_object({"backbone": yaml.safe_load((CONFIGS / name).read_text())})
    return parser.instantiate_classes(cfg).backbone


@pytest.mark.parametrize("name", ["sequence_cnn.yaml", "sequence_lstm.yaml", "grid_cnn.yaml"])
def test_parameter_counts_within_20_percent_of_the_transformer(name: str) -> None:
    transformer = sum(p.numel() for p in build("small.yaml").parameters())
    baseline = sum(p.numel() for p in build(name).parameters())
    assert 0.8 <= baseline / transformer <= 1.2, f"{name}: {baseline:,} vs transformer {transformer:,}"


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


def test_grid_cnn_reads_the_grid_and_fills_prefix_tokens() -> None:
    model = GridCNN(32, blocks=1, hidden=16).eval()
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
