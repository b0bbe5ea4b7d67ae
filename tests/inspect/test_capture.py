"""attention_maps: per-layer (B, H, N, N) weights with padding excluded, and token labels."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.errors import UserError
from tabrasa.inspect import attention_maps
from tabrasa.tokenizers.protein import ProteinTokenizer


def _protein_model(registers: int = 0) -> tuple[Encoder, torch.nn.Module, ProteinTokenizer]:
    tokenizer = ProteinTokenizer()
    encoder = Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=32, register_tokens=registers))
    return encoder, tokenizer.embedder(32), tokenizer


def test_rows_sum_to_one_over_real_keys_and_padding_is_zero() -> None:
    encoder, embedder, tokenizer = _protein_model()
    batch = tokenizer.collate([tokenizer("MKTAYIAKQR"), tokenizer("MKT")])  # 12 and 5 tokens
    maps = attention_maps(encoder, embedder, batch, tokenizer)
    assert maps.layers == 2 and maps.heads == 4
    w = maps.weights[0]
    assert w.shape == (2, 4, 12, 12)
    np.testing.assert_allclose(w[1, :, :5, :5].sum(axis=-1), 1.0, atol=1e-6)
    assert np.all(w[1, :, :, 5:] == 0) and np.all(w[1, :, 5:, :] == 0)
    assert [e.shape for e in maps.example(1)] == [(4, 5, 5)] * 2
    assert maps.example_labels(1) == ["<cls>", "M", "K", "T", "<eos>"]


def test_registers_lead_the_maps_and_the_labels() -> None:
    encoder, embedder, tokenizer = _protein_model(registers=2)
    batch = tokenizer.collate([tokenizer("MKT")])
    maps = attention_maps(encoder, embedder, batch, tokenizer)
    assert maps.weights[0].shape == (1, 4, 7, 7)
    assert maps.example_labels(0) == ["[reg0]", "[reg1]", "<cls>", "M", "K", "T", "<eos>"]


def test_a_model_without_attention_is_refused() -> None:
    with pytest.raises(UserError, match="not a tabrasa transformer Encoder"):
        attention_maps(torch.nn.Linear(2, 2), torch.nn.Identity(), {})  # type: ignore[arg-type]
