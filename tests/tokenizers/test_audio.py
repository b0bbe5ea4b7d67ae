"""Audio tokenizer: frame counts, resampling, downmix, SpecAugment in train mode only, padding masks."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import torch

from tabrasa.backbone.tokens import TokenGrid
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.audio_features import LOG_FLOOR, mel_statistics


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def sine(freq: float, seconds: float, rate: int) -> torch.Tensor:
    t = torch.arange(round(seconds * rate)) / rate
    return 0.5 * torch.sin(2 * math.pi * freq * t)


def test_one_second_at_16khz_is_101_frames() -> None:
    tok = AudioTokenizer(input_sample_rate=16000)
    assert tok(torch.randn(16000))["features"].shape == (101, 64)  # centred: 1 + 16000 // 160
    assert tok(torch.randn(8000))["features"].shape == (51, 64)
    assert AudioTokenizer(n_mels=80, input_sample_rate=16000)(torch.randn(16000))["features"].shape == (
        101,
        80,
    )


@pytest.mark.parametrize("rate", [8000, 44100])
def test_resampling_keeps_duration_and_pitch(rate: int) -> None:
    tok = AudioTokenizer(mean=0.0, std=1.0)
    native = tok({"audio": sine(1000, 1.0, 16000), "sample_rate": 16000})["features"]
    other = tok({"audio": sine(1000, 1.0, rate), "sample_rate": rate})["features"]
    assert other.shape == native.shape == (101, 64)
    # The loudest mel bin of every inner frame is the 1 kHz tone's, whatever the input rate.
    assert torch.equal(other[2:-2].argmax(-1), native[2:-2].argmax(-1))


def test_stereo_is_downmixed_by_the_mean() -> None:
    tok = AudioTokenizer(input_sample_rate=16000)
    left, right = torch.randn(16000), torch.randn(16000)
    stereo = tok(torch.stack([left, right]))["features"]
    torch.testing.assert_close(stereo, tok((left + right) / 2)["features"])
    torch.testing.assert_close(tok(np.stack([left.numpy(), right.numpy()]))["features"], stereo)


def test_silence_is_finite_at_the_floor() -> None:
    tok = AudioTokenizer(input_sample_rate=16000, mean=-4.0, std=2.0)
    features = tok(torch.zeros(2, 16000))["features"]
    expected = (math.log(LOG_FLOOR) + 4.0) / 2.0
    torch.testing.assert_close(features, torch.full_like(features, expected))


def test_bad_audio_gives_clear_errors() -> None:
    tok = AudioTokenizer(input_sample_rate=16000)
    nan = torch.zeros(16000)
    nan[5] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinite samples"):
        tok(nan)
    with pytest.raises(ValueError, match="NaN or infinite samples"):
        tok(torch.full((16000,), float("inf")))
    with pytest.raises(ValueError, match="is empty"):
        tok(torch.zeros(0))
    with pytest.raises(ValueError, match=r"more channels than samples; waveforms are \(C, T\): transpose"):
        tok(torch.zeros(16000, 2))
    with pytest.raises(TypeError, match="int16 PCM: divide by 32768"):
        tok(torch.zeros(16000, dtype=torch.int16))
    with pytest.raises(ValueError, match=r"expected \(T,\) mono or \(C, T\)"):
        tok(torch.zeros(1, 2, 16000))
    with pytest.raises(ValueError, match=r"no sample rate; .*AudioTokenizer\(input_sample_rate="):
        AudioTokenizer()(torch.zeros(16000))


def test_spec_augment_only_in_train_mode() -> None:
    wave = torch.randn(16000)
    tok = AudioTokenizer(input_sample_rate=16000, freq_mask=16, time_mask=30)
    plain = tok(wave)["features"]
    assert not plain.eq(0).any()
    for _ in range(3):
        assert torch.equal(tok(wave)["features"], plain)
    masked = [
        AudioTokenizer(input_sample_rate=16000, train=True, freq_mask=16, time_mask=30)(wave)["features"]
    ]
    tok.train()
    masked += [tok(wave)["features"] for _ in range(4)]
    assert torch.equal(tok.eval()(wave)["features"], plain)  # eval() turns SpecAugment off again
    for m in masked:
        zeroed = m.eq(0) & ~plain.eq(0)
        whole_bins = zeroed.all(dim=0).sum()  # masked mel bins are zero in every frame
        whole_frames = zeroed.all(dim=1).sum()
        assert torch.equal(m[~zeroed], plain[~zeroed])  # the rest is untouched
        assert zeroed.sum() == whole_bins * 101 + whole_frames * 64 - whole_bins * whole_frames
    assert any(m.eq(0).any() for m in masked)


def test_truncation_is_explicit_and_counted() -> None:
    wave = torch.randn(32000)  # 201 frames
    full = AudioTokenizer(input_sample_rate=16000)(wave)["features"]
    head = AudioTokenizer(input_sample_rate=16000, max_frames=100)(wave)
    assert head["features"].shape == (100, 64) and int(head["truncated"]) == 101
    torch.testing.assert_close(head["features"], full[:100])
    tail = AudioTokenizer(input_sample_rate=16000, max_frames=100, truncation="tail")(wave)
    torch.testing.assert_close(tail["features"], full[-100:])
    assert int(AudioTokenizer(input_sample_rate=16000)(wave)["truncated"]) == 0
    with pytest.raises(ValueError, match="201 frames, more than max_frames=100; raise max_frames or choose"):
        AudioTokenizer(input_sample_rate=16000, max_frames=100, truncation="error")(wave)
    with pytest.raises(ValueError, match="truncation='cut' is not known"):
        AudioTokenizer(truncation="cut")  # type: ignore[arg-type]


def test_frame_tokens_pad_to_the_longest_and_mask_the_padding() -> None:
    tok = AudioTokenizer(input_sample_rate=16000)
    long, short = tok(torch.randn(16000)), tok(torch.randn(8000))
    batch = tok.collate([long, short])
    assert batch["features"].shape == (2, 101, 64)
    assert batch["frame_mask"].sum(1).tolist() == [101, 51] and not batch["features"][1, 51:].any()
    emb = tok.embedder(32)
    out = emb(batch)
    assert out.x.shape == (2, 102, 32) and out.grid == TokenGrid(101, 1, prefix=1)
    assert out.mask[:, 0].all() and out.mask[1, 1:52].all() and not out.mask[1, 52:].any()
    alone = emb(tok.collate([short]))
    torch.testing.assert_close(out.x[1, :52], alone.x[0])  # padding never changes the real tokens


def test_patch_tokens_mask_only_patches_wholly_in_the_padding() -> None:
    tok = AudioTokenizer(input_sample_rate=16000, patch_size=(16, 16))
    long, short = tok(torch.randn(16000)), tok(torch.randn(8000))  # 101 and 51 frames
    batch = tok.collate([long, short])
    assert batch["features"].shape == (2, 112, 64)  # time padded up to a multiple of 16
    out = tok.embedder(32)(batch)
    assert out.grid == TokenGrid(7, 4, prefix=1) and out.x.shape == (2, 1 + 28, 32)
    assert out.mask[0].all()
    # 51 frames touch 4 of 7 patch rows (frames 48-50 share a row with padding): 16 patches + CLS.
    assert out.mask[1].sum() == 17 and out.mask[1, :17].all()
    emb = tok.embedder(32)
    torch.testing.assert_close(emb(batch).x[1, :17], emb(tok.collate([short])).x[0])
    assert tok.max_tokens == 1 + 64 * 4  # 1024 frames → 64 rows of 4 patches


def test_patch_frequency_must_divide_mel_bins() -> None:
    with pytest.raises(ValueError, match="must divide n_mels=64"):
        AudioTokenizer(patch_size=(16, 10))


def test_hugging_face_audio_rows_and_statistics() -> None:
    tok = AudioTokenizer(mean=0.0, std=1.0)
    row = {"audio": {"array": np.random.default_rng(0).normal(size=8000), "sampling_rate": 8000}, "label": 2}
    out = tok(row)
    assert out["features"].shape == (101, 64) and int(out["label"]) == 2
    mean, std = mel_statistics([out["features"]])
    normalised = AudioTokenizer(mean=mean, std=std)(row)["features"]
    torch.testing.assert_close(normalised.mean(0), torch.zeros(64), atol=1e-4, rtol=0)
    torch.testing.assert_close(normalised.std(0), torch.ones(64), atol=1e-4, rtol=0)


def test_tokenizer_pickles_for_loader_workers() -> None:
    tok = AudioTokenizer(input_sample_rate=8000, patch_size=16)
    wave = torch.randn(8000)
    torch.testing.assert_close(pickle.loads(pickle.dumps(tok))(wave)["features"], tok(wave)["features"])


def test_batched_encoding_matches_clip_by_clip_and_masks_each_clip() -> None:
    tokenizer = AudioTokenizer(input_sample_rate=16000, n_mels=32, freq_mask=6, time_mask=10)
    waves = torch.randn(5, 16000, generator=torch.Generator().manual_seed(0)) * 0.1
    batched = tokenizer.encode_batch(list(waves))
    one_by_one = tokenizer.collate([tokenizer.encode(w, 16000) for w in waves])
    assert batched.keys() == one_by_one.keys()
    torch.testing.assert_close(batched["features"], one_by_one["features"], rtol=0, atol=1e-5)
    torch.manual_seed(0)
    masked = tokenizer.train().encode_batch(list(waves[:1].expand(16, -1)))["features"]
    zero_bins = (masked == 0).all(dim=1).sum(dim=1)  # mel bins masked over every frame, per clip
    assert len(set(zero_bins.tolist())) > 1, "every clip draws its own frequency mask"
    mixed = tokenizer.eval().encode_batch([waves[0], waves[1, :8000]])  # unequal lengths: clip by clip
    assert mixed["frame_mask"].sum(1).tolist() == [101, 51]


def test_short_clips_are_padded_with_silence_to_one_window() -> None:
    tok = AudioTokenizer(input_sample_rate=16000, n_mels=32)
    click = tok(torch.full((160,), 0.5))["features"]  # 10 ms: shorter than one 25 ms window
    assert click.shape == (1 + 400 // 160, 32)  # padded to 400 samples: 1 + 400 // hop frames
    assert bool(torch.isfinite(click).all())
    padded = tok(torch.nn.functional.pad(torch.full((160,), 0.5), (0, 240)))["features"]
    torch.testing.assert_close(click, padded)  # exactly the clip followed by silence
