from __future__ import annotations

import pytest
import torch

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining import MaskedPatchModel
from tabrasa.tasks.pretraining.targets import image_patches, normalise_per_patch
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.image import ImageTokenizer
from tests.tasks.pretraining.conftest import encoder


def test_patch_targets_follow_the_embedders_token_order() -> None:
    pixels = torch.arange(2 * 1 * 4 * 4, dtype=torch.float32).reshape(2, 1, 4, 4)
    patches = image_patches(pixels, (2, 2))  # (2, 4, 4): patch (row 0, col 1) is pixels [0:2, 2:4]
    assert patches[0, 1].tolist() == [2.0, 3.0, 6.0, 7.0]
    normed = normalise_per_patch(patches)
    torch.testing.assert_close(normed.mean(-1), torch.zeros(2, 4))


@pytest.mark.parametrize("masking", ["random", "block"])
def test_image_masked_patch_modelling_trains(masking: str) -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=1, image_size=16)
    model = MaskedPatchModel(tokenizer, encoder(), masking=masking, mask_ratio=0.5)
    batch = tokenizer.encode_batch(torch.randint(0, 255, (3, 1, 16, 16), dtype=torch.uint8))
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        torch.manual_seed(1)  # the same masks every step: the loss must fall on a fixed problem
        out = model.step(batch)
        optimiser.zero_grad()
        out.loss.backward()
        optimiser.step()
        losses.append(out.loss.item())
    assert out.count == 3 * 8
    assert losses[-1] < 0.7 * losses[0]


def test_audio_padding_is_never_masked_or_scored() -> None:
    tokenizer = AudioTokenizer(
        input_sample_rate=16000, n_mels=16, patch_size=(4, 16), freq_mask=0, time_mask=0
    )
    model = MaskedPatchModel(tokenizer, encoder(), mask_ratio=0.5)
    short, long = torch.randn(3200) * 0.1, torch.randn(8000) * 0.1
    batch = tokenizer.collate([tokenizer(short), tokenizer(long)])
    tokens = model.embedder(batch)
    real_patches = tokens.mask[:, 1:].sum(-1)  # after CLS
    out = model.step(batch)
    assert out.count == sum(max(1, round(0.5 * int(n))) for n in real_patches)
    empty = {k: v.clone() for k, v in batch.items()}
    empty["frame_mask"] = torch.zeros_like(batch["frame_mask"])
    nothing = model.step(empty)
    nothing.loss.backward()
    assert nothing.loss.item() == 0.0 and nothing.count == 0


def test_audio_frames_are_targets_too() -> None:
    tokenizer = AudioTokenizer(input_sample_rate=16000, n_mels=8, freq_mask=0, time_mask=0)
    model = MaskedPatchModel(tokenizer, encoder(max_len=128), masking="block")
    batch = tokenizer.collate([tokenizer(torch.randn(4000) * 0.1)])
    assert torch.isfinite(model.step(batch).loss)


def test_bad_masking_is_a_user_error() -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=1, image_size=16)
    with pytest.raises(UserError, match="mask_ratio"):
        MaskedPatchModel(tokenizer, encoder(), mask_ratio=0.0)
    with pytest.raises(UserError, match="masking"):
        MaskedPatchModel(tokenizer, encoder(), masking="grid")  # type: ignore[arg-type]
