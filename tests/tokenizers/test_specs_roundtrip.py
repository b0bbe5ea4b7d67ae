"""Protein, audio and byte tokenizers and their embedders rebuild from their typed specs (and the specs'
JSON), and a model built on any of them comes back from a tabrasa checkpoint computing what it did."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.pretrained import PretrainedSource, load_pretrained
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.specs import build_embedder, build_tokenizer, embedder_spec, tokenizer_spec
from tabrasa.pretrained.tabrasa_format import save_tabrasa
from tabrasa.tasks import Classifier
from tabrasa.tokenizers.audio import AudioEmbedder, AudioTokenizer, AudioTokenizerSpec
from tabrasa.tokenizers.base import Batch, Tokenizer
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.esm import EsmProteinTokenizer
from tabrasa.tokenizers.protein import ProteinEmbedder, ProteinTokenizer
from tabrasa.tokenizers.text import TextEmbedder

DIM = 16


def _wave(seconds: float, rate: int, seed: int) -> torch.Tensor:
    return 0.1 * torch.randn(int(seconds * rate), generator=torch.Generator().manual_seed(seed))


def _patch_audio() -> AudioTokenizer:
    mean = [-5.0 + 0.1 * i for i in range(16)]  # per bin, so a spec that kept one value would differ
    return AudioTokenizer(
        sample_rate=8000, input_sample_rate=16000, n_mels=16, win_ms=32.0, hop_ms=16.0, mean=mean, std=2.5,
        patch_size=(4, 8), max_frames=20, truncation="head_tail", freq_mask=3, time_mask=5, cls_token=False,
    )  # fmt: skip


# Every case: a tokenizer with non-default settings, so a field the spec drops shows as a difference,
# and inputs that exercise them (an unknown residue, a cut, a multi-byte character, another sample rate).
CASES: dict[str, tuple[Callable[[], Tokenizer], list[Any]]] = {
    "protein": (
        lambda: ProteinTokenizer(max_length=12, truncation="tail", unknown="x"),
        ["MKTAYJAKQRQISFVKSHFSRQ", {"sequence": "mk ta*", "label": 1}],
    ),
    "audio-patches": (
        _patch_audio,
        [_wave(0.5, 16000, 0), {"audio": _wave(0.2, 22050, 1).numpy(), "sampling_rate": 22050}],
    ),
    "audio-frames": (
        lambda: AudioTokenizer(n_mels=12, max_frames=30, mean=-6.0, std=3.0),
        [{"array": _wave(0.25, 16000, 2), "sample_rate": 16000, "label": 0}],
    ),
    "bytes": (
        lambda: ByteTokenizer(max_length=10, truncation="head"),
        ["héllo wörld, much longer than ten bytes", {"text": "ok", "label": 1}],
    ),
    "byte-patches": (
        lambda: ByteTokenizer(max_length=22, truncation="head_tail", patch_size=4),
        ["héllo wörld, much longer than ten bytes", {"text": "ok", "label": 1}],
    ),
}


def _batch(tokenizer: Tokenizer, inputs: list[Any]) -> Batch:
    return tokenizer.collate([tokenizer.encode(x) for x in inputs])  # type: ignore[attr-defined]


def _assert_same_batch(got: Batch, expected: Batch) -> None:
    assert set(got) == set(expected)
    for key, tensor in expected.items():
        assert torch.equal(got[key], tensor), key


@pytest.mark.parametrize("case", CASES)
def test_a_tokenizer_rebuilds_from_its_spec_and_encodes_the_same(case: str, tmp_path: Path) -> None:
    make, inputs = CASES[case]
    tokenizer = make()
    spec = tokenizer.to_spec()  # type: ignore[attr-defined]
    assert type(spec).from_json(json.loads(json.dumps(spec.to_json()))) == spec
    again = tokenizer_spec(json.loads(json.dumps(spec.to_json())))
    assert again == spec and type(again) is type(spec)
    rebuilt = build_tokenizer(again, tmp_path)
    assert type(rebuilt) is type(tokenizer) and rebuilt.to_spec() == spec  # type: ignore[union-attr]
    _assert_same_batch(_batch(rebuilt, inputs), _batch(tokenizer, inputs))  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES)
def test_an_embedder_rebuilds_from_its_spec_and_computes_the_same(case: str) -> None:
    make, inputs = CASES[case]
    tokenizer = make()
    embedder = tokenizer.embedder(DIM)
    spec = embedder.to_spec()  # type: ignore[operator]
    again = embedder_spec(json.loads(json.dumps(spec.to_json())))
    assert again == spec and type(again) is type(spec)
    rebuilt = build_embedder(again, DIM)
    assert type(rebuilt) is type(embedder) and rebuilt.to_spec() == spec  # type: ignore[operator]
    shapes = {k: v.shape for k, v in embedder.state_dict().items()}
    assert {k: v.shape for k, v in rebuilt.state_dict().items()} == shapes
    rebuilt.load_state_dict(embedder.state_dict(), strict=True)
    batch = _batch(tokenizer, inputs)
    with torch.no_grad():
        assert torch.equal(rebuilt(batch).x, embedder(batch).x)


def test_each_embedder_class_keeps_its_own_kind() -> None:
    """ProteinEmbedder is a TextEmbedder subclass: its spec must rebuild a ProteinEmbedder, not the parent
    (nor ESM's subclass); bytes use the plain text table, whose spec already exists."""
    assert type(build_embedder(ProteinEmbedder(DIM).to_spec(), DIM)) is ProteinEmbedder
    assert ProteinTokenizer().to_spec().kind != EsmProteinTokenizer().to_spec().kind
    assert type(ByteTokenizer().embedder(DIM)) is TextEmbedder
    patches = ByteTokenizer(patch_size=4).embedder(DIM)
    assert type(build_embedder(patches.to_spec(), DIM)) is type(patches) is not TextEmbedder
    assert type(build_embedder(AudioEmbedder(8, DIM).to_spec(), DIM)) is AudioEmbedder


def test_an_esm_tokenizer_keeps_its_unknown_policy() -> None:
    tokenizer = EsmProteinTokenizer(32, "head_tail", unknown="x", token_dropout=False)
    spec = tokenizer_spec(json.loads(json.dumps(tokenizer.to_spec().to_json())))
    rebuilt = build_tokenizer(spec, Path("."))
    assert isinstance(rebuilt, EsmProteinTokenizer) and rebuilt.unknown == "x"
    old_file = {"kind": "protein", "max_length": 32, "token_dropout": True, "truncation": "head"}
    assert tokenizer_spec(old_file).unknown == "error"  # type: ignore[union-attr]


@pytest.mark.parametrize("patch_size", [None, (4, 8)])
def test_an_audio_spec_fitted_to_fewer_positions_fits_them(patch_size: tuple[int, int] | None) -> None:
    spec = AudioTokenizer(n_mels=16, patch_size=patch_size, max_frames=1000).to_spec()
    fitted = spec.fitted(41, None)
    assert isinstance(fitted, AudioTokenizerSpec)
    tokenizer = AudioTokenizer.from_spec(fitted)
    assert tokenizer.max_tokens <= 41 and fitted.max_frames == (40 if patch_size is None else 80)
    with pytest.raises(ValueError, match="max_len=1 leaves no position"):
        spec.fitted(1, None)  # the class token alone


@pytest.mark.parametrize("case", ["protein", "audio-patches", "bytes", "byte-patches"])
def test_a_classifier_comes_back_from_a_tabrasa_checkpoint(case: str, tmp_path: Path) -> None:
    make, inputs = CASES[case]
    tokenizer = make()
    config = EncoderConfig(dim=32, depth=1, heads=4, max_len=64)
    torch.manual_seed(0)
    model = Classifier(tokenizer, 3, Encoder(config))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))  # nothing at its initial value, so no mix-up can hide
    model.eval()
    pconf = PretrainedConfig("tabrasa", config, model.embedder.to_spec(), tokenizer.to_spec())  # type: ignore
    folder = save_tabrasa(model.backbone, model.embedder, pconf, tmp_path / "checkpoint")

    loaded = load_pretrained("tabrasa", str(folder))
    assert type(loaded.tokenizer) is type(tokenizer) and type(loaded.embedder) is type(model.embedder)
    batch = _batch(tokenizer, inputs)
    _assert_same_batch(_batch(loaded.tokenizer, inputs), batch)  # type: ignore[arg-type]
    with torch.no_grad():
        tokens = model.embedder(batch)
        expected = model.backbone(tokens.x, tokens.mask, grid=tokens.grid)
        again = loaded.embedder(batch)
        got = loaded.encoder(again.x, again.mask, grid=again.grid)
    assert torch.equal(got, expected)

    # A task config naming the folder (`pretrained: {family: tabrasa, path: ...}`) gets the same model.
    source = PretrainedSource("tabrasa", str(folder))
    start = Classifier(loaded.tokenizer, 3, Encoder(config), pretrained=source).eval()  # type: ignore[arg-type]
    start.load_pretrained_weights()
    with torch.no_grad():
        assert torch.equal(start.features(batch), model.features(batch))
