"""inspect_input for audio and protein models built in Python: files read, PNGs and numbers written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.errors import UserError
from tabrasa.inspect.report import inspect_input
from tabrasa.inspect.source import Inspected, modality_of
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer


def _model(tokenizer: Tokenizer) -> Inspected:
    encoder = Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=64))
    return Inspected(encoder, tokenizer.embedder(32), tokenizer, modality_of(tokenizer), "tiny")


@pytest.mark.slow
def test_audio_rollout_over_the_spectrogram(tmp_path: Path) -> None:
    wav = tmp_path / "tone.wav"
    t = np.arange(8000) / 16000
    soundfile.write(wav, 0.3 * np.sin(2 * np.pi * 440 * t), 16000)  # 0.5 s
    model = _model(AudioTokenizer(n_mels=16, patch_size=(4, 16), max_frames=60))
    summary = inspect_input(model, str(wav), tmp_path / "out")
    assert (tmp_path / "out" / "rollout.png").stat().st_size > 0
    assert summary["distance_unit"] == "spectrogram bins"
    assert np.array(summary["mean_attention_distance"]).shape == (2, 4)


@pytest.mark.slow
def test_protein_from_fasta_gets_residue_labels(tmp_path: Path) -> None:
    fasta = tmp_path / "p.fasta"
    fasta.write_text(">sp|P1|test\nMKTAY\nIAK\n>second\nMMM\n")
    summary = inspect_input(_model(ProteinTokenizer()), str(fasta), tmp_path / "out")
    assert summary["tokens"] == ["<cls>", *"MKTAYIAK", "<eos>"]
    assert summary["distance_unit"] == "residues"
    assert (tmp_path / "out" / "attention_tokens.png").stat().st_size > 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["modality"] == "protein"


@pytest.mark.parametrize(
    ("value", "message"),
    [("", "is empty"), ("MK1T", "cannot be encoded"), ("x.wav", None)],
)
def test_bad_protein_inputs(tmp_path: Path, value: str, message: str | None) -> None:
    if message is None:  # an audio file given to a protein model
        (tmp_path / value).write_bytes(b"RIFF")
        value, message = str(tmp_path / value), "is an audio file, but this model reads protein"
    with pytest.raises(UserError, match=message):
        inspect_input(_model(ProteinTokenizer()), value, tmp_path / "out")
