"""SpectrogramCNN narrows each cell token to 4 channels before its first 3×3 convolution. On the tokens
AudioEmbedder gives (one log-mel value each, through a 1×1 convolution) that loses nothing: the narrow
stem can compute exactly what a 3×3 convolution from the full token width computes."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tabrasa.backbone import SpectrogramCNN
from tabrasa.tokenizers.audio import AudioEmbedder

DIM, CHANNELS, FRAMES, BINS = 16, 6, 9, 5


def full_width_stem_and_its_narrow_copy(w: torch.Tensor, b: torch.Tensor) -> tuple:
    """A 3×3 convolution from DIM channels, and a SpectrogramCNN whose 1×1 projection recovers (value, 1)
    from tokens v·w + b and whose 3×3 convolution folds w and b into its two input channels."""
    torch.manual_seed(1)
    full = torch.nn.Conv2d(DIM, CHANNELS, 3, padding=1)
    model = SpectrogramCNN(DIM, channels=CHANNELS, blocks=0, stem_channels=2)
    with torch.no_grad():
        proj = model.cell_proj
        proj.weight.zero_()
        proj.bias.zero_()
        proj.weight[0] = w / w.dot(w)  # channel 0: the value v
        proj.bias[0] = -w.dot(b) / w.dot(w)
        proj.bias[1] = 1.0  # channel 1: 1 at every real cell, 0 in the zero padding, as b is there
        model.stem.weight[:, 0] = torch.einsum("cdij,d->cij", full.weight, w)
        model.stem.weight[:, 1] = torch.einsum("cdij,d->cij", full.weight, b)
        model.stem.bias.copy_(full.bias)
    return full, model


def stems(tokens: torch.Tensor, full: torch.nn.Conv2d, model: SpectrogramCNN) -> tuple:
    as_map = tokens.transpose(1, 2).reshape(1, DIM, FRAMES, BINS)
    narrow = model.project_tokens(tokens).transpose(1, 2).reshape(1, 2, FRAMES, BINS)
    return full(as_map), model.stem(narrow)


def test_the_narrow_stem_computes_the_full_width_stem_on_cell_tokens() -> None:
    embedder = AudioEmbedder(n_mels=BINS, dim=DIM, patch_size=[1, 1], cls_token=False)
    tokens = embedder({"features": torch.randn(1, FRAMES, BINS)}).x  # (1, FRAMES·BINS, DIM)
    full, model = full_width_stem_and_its_narrow_copy(embedder.proj.weight.flatten(), embedder.proj.bias)
    wide, narrow = stems(tokens, full, model)
    torch.testing.assert_close(narrow, wide, atol=1e-5, rtol=1e-5)


def test_tokens_of_more_than_one_value_would_not_fit_through_it() -> None:
    """Counter-test: tokens that are not affine in one value (here random) lose what the narrow stem drops,
    so the test above holds because of what cell tokens are, not by construction."""
    embedder = AudioEmbedder(n_mels=BINS, dim=DIM, patch_size=[1, 1], cls_token=False)
    full, model = full_width_stem_and_its_narrow_copy(embedder.proj.weight.flatten(), embedder.proj.bias)
    wide, narrow = stems(torch.randn(1, FRAMES * BINS, DIM), full, model)
    assert (narrow - wide).abs().max() > 1e-2
    assert F.mse_loss(narrow, wide) > 1e-3
