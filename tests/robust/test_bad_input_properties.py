"""Messy input, generated: every tokenizer and the backbone either give finite tokens end to end or raise
a ValueError/TypeError that names the input and says what to do. Never a crash inside torch, never NaN.

Each property feeds raw input through tokenizer → collate → embedder → Encoder, so a tokenizer that lets
something bad through is caught where it would hurt.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.tokenizers import AudioTokenizer, ImageTokenizer, ProteinTokenizer, TextTokenizer, Tokenizer
from tabrasa.tokenizers.protein import ESM_ALPHABET
from tabrasa.tokenizers.text import train_subword_tokenizer

# Derandomized: CI runs the same examples every time; a failure prints the shrunk input to paste in a test.
PROPERTY = settings(
    max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
DIM = 32
# A clear error says what to do: one of these verbs (or "must") appears in every tabrasa error message.
FIX = re.compile(
    r"\b(pass|drop|raise|choose|build|cast|decode|scale|truncate|transpose|convert|fix|clean|resize|pad|"
    r"give|put|use|set|must|needs?|expected|run)\b"
)


def expect_finite_or_clear_error(run: Callable[[], torch.Tensor], names: str) -> torch.Tensor | None:
    """run() returns finite tokens, or raises ValueError/TypeError/KeyError whose message starts by naming
    the input (`names`, a regex) and says what to do."""
    try:
        out = run()
    except (ValueError, TypeError, KeyError) as error:
        message = str(error).strip("'\"")
        assert re.match(names, message), f"error does not start by naming the input ({names}): {message}"
        assert FIX.search(message), f"error says no fix: {message}"
        return None
    assert bool(torch.isfinite(out).all()), "non-finite tokens"
    return out


def through_backbone(tokenizer: Tokenizer, examples: list[Any], max_len: int = 512) -> torch.Tensor:
    """Raw examples → tokenizer → collate → embedder → Encoder (dim 32, 2 layers): the contextual tokens."""
    batch = tokenizer.collate([tokenizer(example) for example in examples])
    tokens = tokenizer.embedder(DIM)(batch)
    encoder = Encoder(EncoderConfig(dim=DIM, depth=2, heads=4, max_len=max_len))
    out = encoder(tokens.x, tokens.mask, grid=tokens.grid)
    assert out.shape == tokens.x.shape
    assert bool((out[~tokens.mask] == 0).all()), "padding outputs must be zero"
    return out


# Text ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def vocabulary() -> Any:
    corpus = ["a good film", "a bad film", "great acting", "awful plot", "ünïcödé 映画 🎬"] * 10
    return train_subword_tokenizer(corpus, vocab_size=80)


# Any code point, lone surrogates (what errors='surrogateescape' leaves) included.
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=60) | st.builds(
    lambda a, b: a + "\udcff" + b, st.text(max_size=5), st.text(max_size=5)
)


@PROPERTY
@given(
    texts=st.lists(ANY_TEXT, min_size=1, max_size=3),
    max_length=st.integers(1, 24),
    policy=st.sampled_from(["error", "head", "tail", "head_tail"]),
    table=st.integers(1, 24),
)
def test_text_any_string_any_length(
    vocabulary: Any, texts: list[str], max_length: int, policy: str, table: int
) -> None:
    tokenizer = TextTokenizer(vocabulary, max_length, policy)  # type: ignore[arg-type]
    embed = tokenizer.embedder(DIM)
    for text in texts:
        expect_finite_or_clear_error(
            lambda t=text: embed(tokenizer.collate([tokenizer(t)])).x, "text|max_length"
        )
    # max_length beyond the position table: a clear error, never an index error inside torch.
    expect_finite_or_clear_error(
        lambda: through_backbone(tokenizer, texts, max_len=table), "text|max_length|input"
    )


@PROPERTY
@given(data=st.binary(max_size=20) | st.integers() | st.none() | st.lists(st.text(max_size=3), max_size=2))
def test_text_that_is_not_a_string_is_named(vocabulary: Any, data: object) -> None:
    tokenizer = TextTokenizer(vocabulary, 16)
    with pytest.raises(TypeError, match=r"^text is .*TextTokenizer takes str"):
        tokenizer.encode(data)  # type: ignore[arg-type]


def test_text_policies_for_empty_lone_surrogate_and_invalid_utf8(vocabulary: Any) -> None:
    tokenizer = TextTokenizer(vocabulary, 16)
    assert tokenizer("")["input_ids"].tolist() == [
        vocabulary.token_to_id("[CLS]"),
        vocabulary.token_to_id("[SEP]"),
    ]
    with pytest.raises(
        ValueError, match=r"text is not valid Unicode: '\\udcff' at character 3.*errors='replace'"
    ):
        tokenizer("abc\udcff")
    with pytest.raises(TypeError, match=r"text is bytes.*decode it first"):
        tokenizer.encode(b"\xff\xfe invalid utf-8")  # type: ignore[arg-type]


# Proteins -----------------------------------------------------------------------------------------------
RESIDUE_LETTERS = "".join(t for t in ESM_ALPHABET if len(t) == 1 and t.isalpha())
PROTEIN_TEXT = st.text(
    st.sampled_from(RESIDUE_LETTERS + RESIDUE_LETTERS.lower() + "JjÅß1 *\n\t.-ﬀ") | st.characters(),
    max_size=40,
)


@PROPERTY
@given(
    sequences=st.lists(PROTEIN_TEXT, min_size=1, max_size=3),
    unknown=st.sampled_from(["error", "unk", "x"]),
    max_length=st.integers(3, 30),
    table=st.integers(1, 30),
)
def test_protein_any_letters_any_length(
    sequences: list[str], unknown: str, max_length: int, table: int
) -> None:
    tokenizer = ProteinTokenizer(max_length=max_length, unknown=unknown)  # type: ignore[arg-type]
    for sequence in sequences:
        try:
            ids = tokenizer(sequence)["input_ids"]
        except ValueError as error:
            assert str(error).startswith("protein "), error
            assert "drop it" in str(error) or "ProteinTokenizer(unknown=...)" in str(error), error
            continue
        assert 3 <= len(ids) <= max_length and int(ids.max()) < tokenizer.vocab_size
    expect_finite_or_clear_error(
        lambda: through_backbone(tokenizer, sequences, max_len=table), "protein|input"
    )


@PROPERTY
@given(residues=st.text(st.sampled_from(RESIDUE_LETTERS), min_size=1, max_size=30))
def test_protein_lower_case_is_the_same_protein(residues: str) -> None:
    tokenizer = ProteinTokenizer()
    assert torch.equal(tokenizer(residues.lower())["input_ids"], tokenizer(residues)["input_ids"])


def test_protein_non_ascii_letters_are_not_upper_cased_into_residues() -> None:
    # str.upper() maps 'ß' to 'SS' and 'ﬀ' to 'FF': two serines or phenylalanines that were never there.
    for letter in ("ß", "ﬀ"):
        with pytest.raises(ValueError, match=f"'{letter}' at residue 3"):
            ProteinTokenizer()(f"MK{letter}L")


# Images -------------------------------------------------------------------------------------------------
@st.composite
def images(draw: st.DrawFn) -> object:
    channels = draw(st.sampled_from([1, 2, 3, 4]))
    height, width = draw(st.integers(0, 13)), draw(st.integers(0, 13))
    dtype = draw(st.sampled_from([torch.uint8, torch.float32, torch.float64, torch.int32, torch.bool]))
    pixels = torch.rand(channels, height, width).mul(255 if dtype == torch.uint8 else 1).to(dtype)
    if dtype.is_floating_point and pixels.numel() and draw(st.booleans()):
        pixels.view(-1)[draw(st.integers(0, pixels.numel() - 1))] = draw(
            st.sampled_from([np.nan, np.inf, -np.inf])
        )
    layout = draw(st.sampled_from(["chw", "hw", "numpy-hwc", "flat", "batched"]))
    if layout == "hw":
        return pixels[0]
    if layout == "numpy-hwc":
        return pixels.permute(1, 2, 0).numpy()
    if layout == "flat":
        return pixels.flatten()
    return pixels[None] if layout == "batched" else pixels


@PROPERTY
@given(
    image_list=st.lists(images(), min_size=1, max_size=2),
    image_size=st.sampled_from([None, 8, (4, 12)]),
    table=st.integers(1, 12),
)
def test_image_any_shape_dtype_and_channel_count(
    image_list: list[object], image_size: Any, table: int
) -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=3, image_size=image_size)
    expect_finite_or_clear_error(
        lambda: through_backbone(tokenizer, image_list, max_len=table), "image|input"
    )
    for image in image_list:
        expect_finite_or_clear_error(lambda i=image: tokenizer(i)["pixels"], "image")


def test_image_one_pixel_is_an_error_naming_the_fix_or_resized() -> None:
    with pytest.raises(ValueError, match=r"image is 1x1 pixels.*pass image_size="):
        ImageTokenizer(patch_size=4, channels=3)(torch.zeros(3, 1, 1))
    pixels = ImageTokenizer(patch_size=4, channels=3, image_size=8)(torch.zeros(3, 1, 1))["pixels"]
    assert pixels.shape == (3, 8, 8) and bool(torch.isfinite(pixels).all())
    with pytest.raises(ValueError, match=r"image is empty \(0x5 pixels\); drop it"):
        ImageTokenizer(patch_size=4, channels=3, image_size=8)(torch.zeros(3, 0, 5))


# Audio --------------------------------------------------------------------------------------------------
@st.composite
def waveforms(draw: st.DrawFn) -> dict[str, object]:
    samples = draw(st.sampled_from([0, 1, 150, 201, 800, 2000]))
    shape = draw(st.sampled_from(["mono", "stereo", "time-major", "batched"]))
    amplitude = draw(st.sampled_from([0.0, 1e-9, 1.0, 1e4, 1e20]))
    wave = torch.randn(2, samples) * amplitude
    if samples and draw(st.booleans()):
        wave[0, draw(st.integers(0, samples - 1))] = draw(st.sampled_from([np.nan, np.inf]))
    wave = {"mono": wave[0], "stereo": wave, "time-major": wave.T, "batched": wave[None]}[shape]
    dtype = draw(st.sampled_from([torch.float32, torch.float64, torch.int16]))
    wave = wave.clamp(-30000, 30000).to(dtype) if dtype == torch.int16 else wave.to(dtype)
    rate = draw(st.sampled_from([8000, 16000, 22050, 0, -16000]))
    return {"audio": wave.numpy() if draw(st.booleans()) else wave, "sample_rate": rate}


@PROPERTY
@given(
    clips=st.lists(waveforms(), min_size=1, max_size=2),
    patches=st.sampled_from([None, (2, 4)]),
    table=st.integers(1, 30),
)
def test_audio_any_length_layout_dtype_rate_and_value(
    clips: list[dict[str, object]], patches: Any, table: int
) -> None:
    tokenizer = AudioTokenizer(n_mels=16, max_frames=20, patch_size=patches)
    expect_finite_or_clear_error(lambda: through_backbone(tokenizer, clips, max_len=table), "audio|input")
    for clip in clips:
        expect_finite_or_clear_error(lambda c=clip: tokenizer(c)["features"], "audio")


def test_audio_silence_nan_and_overflow_policies() -> None:
    tokenizer = AudioTokenizer(n_mels=16, max_frames=20)
    silent = tokenizer.encode(torch.zeros(1600), 16000)["features"]
    assert bool(torch.isfinite(silent).all()) and silent.std() < 1e-5  # log(0 + 1e-6): a floor, not -inf
    with pytest.raises(ValueError, match="audio holds NaN or infinite samples; clean or drop it"):
        tokenizer.encode(torch.tensor([0.0, float("nan")] * 800), 16000)
    with pytest.raises(ValueError, match=r"audio peaks at 1e\+20.*scale the samples into \[-1, 1\]"):
        tokenizer.encode(torch.full((1600,), 1e20), 16000)


# Backbone -----------------------------------------------------------------------------------------------
@PROPERTY
@given(
    batch=st.integers(1, 3),
    length=st.integers(0, 10),
    max_len=st.integers(1, 8),
    positions=st.sampled_from(["none", "learned", "sinusoidal", "rotary"]),
    kind=st.sampled_from(["full", "local", "lowrank", "axial"]),
    causal=st.booleans(),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.bfloat16]),
    masking=st.sampled_from(["none", "random", "all-padding-row"]),
    scale=st.sampled_from([0.0, 1.0, 1e4]),
)
def test_encoder_any_length_mask_dtype_and_scale(
    batch: int,
    length: int,
    max_len: int,
    positions: str,
    kind: str,
    causal: bool,
    dtype: torch.dtype,
    masking: str,
    scale: float,
) -> None:
    x = torch.randn(batch, length, DIM).mul(scale).to(dtype)
    mask = None if masking == "none" else torch.rand(batch, length) > 0.3
    if masking == "all-padding-row":
        mask[0] = False  # type: ignore[index]

    def run() -> torch.Tensor:
        # Some combinations are refused by the config itself (e.g. causal low-rank): also a clear error.
        config = EncoderConfig(
            dim=DIM, depth=2, heads=4, max_len=max_len, positions=positions, causal=causal,  # type: ignore[arg-type]
            attention={"kind": kind, "window": 2, "rank": 2, "max_len": max_len},  # type: ignore[arg-type]
        )  # fmt: skip
        return Encoder(config)(x, mask)

    out = expect_finite_or_clear_error(run, r"Encoder|input|attention|[\w-]+ attention")
    if out is not None and mask is not None:
        assert bool((out[~mask] == 0).all())


@pytest.mark.parametrize(
    ("x", "mask", "message"),
    [
        (torch.zeros(3, 32), None, r"Encoder input x has shape \(3, 32\); expected \(batch, tokens, 32\)"),
        (torch.zeros(1, 3, 16), None, r"shape \(1, 3, 16\); expected \(batch, tokens, 32\)"),
        (torch.zeros(1, 3, 32, dtype=torch.long), None, r"dtype torch.int64; expected a float tensor"),
        (torch.zeros(1, 0, 32), None, r"0 tokens; every sequence needs at least one token"),
        (torch.zeros(1, 3, 32), torch.ones(1, 3), r"mask has dtype torch.float32; expected bool"),
        (
            torch.zeros(1, 3, 32),
            torch.ones(1, 4, dtype=torch.bool),
            r"mask has shape \(1, 4\); expected \(1, 3\)",
        ),
        (torch.zeros(1, 9, 32), None, r"9 tokens but the learned position table holds 8; truncate"),
        (
            torch.zeros(1, 3, 32, dtype=torch.float64),
            None,
            r"dtype torch.float64 but the encoder's weights are",
        ),
    ],
    ids=["2d", "width", "integer", "empty", "float-mask", "mask-shape", "too-long", "float64"],
)
def test_encoder_rejects_malformed_input_by_name(
    x: torch.Tensor, mask: torch.Tensor | None, message: str
) -> None:
    encoder = Encoder(EncoderConfig(dim=DIM, depth=1, heads=4, max_len=8))
    with pytest.raises((ValueError, TypeError), match=message):
        encoder(x, mask)
