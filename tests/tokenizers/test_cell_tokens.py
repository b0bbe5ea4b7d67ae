"""One token per pixel and per spectrogram cell: the inputs of the pixel and spectrogram CNN baselines.

ImageTokenizer(patch_size=1) and AudioTokenizer(patch_size=[1, 1]) need no code of their own: a 1×1 patch
projection maps each pixel or (frame, mel bin) cell to a token, on the image's or spectrogram's own grid.
"""

from __future__ import annotations

import torch
from torch import nn

from tabrasa.backbone import PixelCNN, SpectrogramCNN, TokenGrid
from tabrasa.tokenizers.audio import AudioTokenizer, AudioTokenizerSpec
from tabrasa.tokenizers.image import ImageTokenizer


def test_patch_size_1_gives_one_token_per_pixel_on_the_28x28_grid() -> None:
    tokenizer = ImageTokenizer(patch_size=1, channels=1, mean=0.5, std=0.25)
    image = torch.randint(0, 256, (1, 28, 28), dtype=torch.uint8)
    batch = tokenizer.collate([tokenizer(image)])
    embedder = tokenizer.embedder(8)
    tokens = embedder(batch)
    assert tokens.x.shape == (1, 1 + 28 * 28, 8) and bool(tokens.mask.all())
    assert tokens.grid == TokenGrid(28, 28, prefix=1)
    # Golden: pixel (r, c)'s token is w · normalised value + b, in row-major order after CLS.
    value = (image[0, 3, 5].float() / 255 - 0.5) / 0.25
    weight, bias = embedder.proj.weight[:, 0, 0, 0], embedder.proj.bias
    torch.testing.assert_close(tokens.x[0, 1 + 3 * 28 + 5], weight * value + bias)
    no_cls = ImageTokenizer(patch_size=1, channels=1, cls_token=False)
    assert no_cls.embedder(8)(batch).grid == TokenGrid(28, 28, prefix=0)


def test_pixel_tokens_train_the_pixel_cnn_end_to_end() -> None:
    tokenizer = ImageTokenizer(patch_size=1, channels=1, crop_padding=2, train=True)
    batch = tokenizer.encode_batch(torch.randint(0, 256, (4, 1, 28, 28), dtype=torch.uint8))
    embedder, backbone = tokenizer.embedder(16), PixelCNN(16, dropout=0.0)
    tokens = embedder(batch)
    out = backbone(tokens.x, tokens.mask, grid=tokens.grid)
    assert out.shape == (4, 1 + 28 * 28, 16)
    out[:, 0].pow(2).sum().backward()
    assert embedder.proj.weight.grad is not None and bool(embedder.proj.weight.grad.abs().sum() > 0)


def audio_tokenizer() -> AudioTokenizer:
    return AudioTokenizer(input_sample_rate=16000, n_mels=8, patch_size=[1, 1], mean=0.0, std=4.0)


def test_patch_1x1_gives_one_token_per_frame_and_mel_bin() -> None:
    tokenizer = audio_tokenizer()
    long, short = tokenizer(torch.randn(3200)), tokenizer(torch.randn(1600))  # 21 and 11 frames
    batch = tokenizer.collate([long, short])
    embedder = tokenizer.embedder(8)
    tokens = embedder(batch)
    assert batch["features"].shape == (2, 21, 8)
    assert tokens.x.shape == (2, 1 + 21 * 8, 8) and tokens.grid == TokenGrid(21, 8, prefix=1)
    # Rows along time: cell (t, f) is token 1 + 8t + f, real exactly when frame t is.
    cells = tokens.mask[:, 1:].view(2, 21, 8)
    assert bool(cells[0].all()) and bool(cells[1, :11].all()) and not bool(cells[1, 11:].any())
    weight, bias = embedder.proj.weight[:, 0, 0, 0], embedder.proj.bias
    torch.testing.assert_close(tokens.x[1, 1 + 8 * 4 + 6], weight * short["features"][4, 6] + bias)
    assert tokenizer.max_tokens == 1 + tokenizer.max_frames * 8


def test_cell_token_spec_round_trips_and_fits_max_frames_to_the_positions() -> None:
    spec = audio_tokenizer().to_spec()
    assert spec.patch_size == (1, 1)
    assert AudioTokenizer.from_spec(spec).to_spec() == spec
    fitted = AudioTokenizerSpec.fitted(spec, 1 + 101 * 8, None)
    assert fitted.max_frames == 101


def with_statistics(model: nn.Module) -> nn.Module:
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_()
                m.running_var.uniform_(0.5, 2.0)
    return model.eval()


def test_a_shorter_clip_in_a_batch_gets_the_outputs_it_gets_alone() -> None:
    """Clips of 21 and 11 frames through tokenizer, embedder and SpectrogramCNN: the short clip's padded
    frames change none of its real outputs; counter-test: marked real, they do."""
    tokenizer = audio_tokenizer()
    clips = [tokenizer(torch.randn(3200)), tokenizer(torch.randn(1600))]
    embedder, model = tokenizer.embedder(16).eval(), with_statistics(SpectrogramCNN(16, channels=8))
    tokens = embedder(tokenizer.collate(clips))
    out = model(tokens.x, tokens.mask, grid=tokens.grid)
    single = embedder(tokenizer.collate(clips[1:]))
    alone = model(single.x, single.mask, grid=single.grid)
    real = 1 + 11 * 8
    torch.testing.assert_close(out[1, :real], alone[0], atol=1e-5, rtol=1e-5)
    assert torch.all(out[1, real:] == 0)
    all_real = model(tokens.x, torch.ones_like(tokens.mask), grid=tokens.grid)
    assert (all_real[1, :real] - alone[0]).abs().max() > 1e-3
