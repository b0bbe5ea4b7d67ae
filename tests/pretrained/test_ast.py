"""AST (Hugging Face ASTModel layout): overlapping patches, two prefix tokens, Kaldi fbank features."""

from __future__ import annotations

import numpy as np
import torch

from tabrasa.pretrained import check_checkpoint, load_pretrained
from tabrasa.tokenizers.ast import ASTTokenizer
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, hf_file_state, run


def test_tiny_ast_matches_transformers(tiny_ast: Reference) -> None:
    model = load_pretrained("ast", tiny_ast.folder)
    assert model.config.grid == (3, 4) and model.config.prefix_tokens == 2
    features = torch.randn(2, 46, 36)  # (batch, frames, mel bins)
    with torch.no_grad():
        expected = tiny_ast.model(input_values=features).last_hidden_state
    assert_match("ast (tiny random)", run(model, {"features": features}), expected)


def test_ast_tokenizer_matches_the_feature_extractor() -> None:
    from transformers import ASTFeatureExtractor

    reference = ASTFeatureExtractor(num_mel_bins=36, max_length=46)
    ours = ASTTokenizer(n_mels=36, frames=46)
    rng = np.random.default_rng(0)
    for seconds in (0.3, 0.7):  # padded to 46 frames, and cut (counted) from 68
        wave = (0.1 * rng.standard_normal(int(16000 * seconds))).astype(np.float32)
        expected = reference(wave, sampling_rate=16000, return_tensors="pt")["input_values"][0]
        out = ours({"audio": wave, "sample_rate": 16000})
        assert_match("ast tokenizer (features)", out["features"], expected)
    assert int(out["truncated"]) == 68 - 46


def test_ast_audioset_key_map_on_meta() -> None:
    from transformers import ASTConfig, ASTModel

    config = ASTConfig()  # 1024 frames × 128 mel bins, 12 × 101 patches
    pconf = check_checkpoint("ast", hf_file_state(ASTModel, config), config.to_dict())
    assert (pconf.grid, pconf.encoder.max_len) == ((12, 101), 1214)
