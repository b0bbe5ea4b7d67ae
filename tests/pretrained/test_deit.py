"""DeiT and its distillation token: Hugging Face DeiTModel (`deit`), timm's distilled DeiT (`vit_timm`)."""

from __future__ import annotations

from pathlib import Path

import torch

from tabrasa.pretrained import export_pretrained, load_pretrained
from tabrasa.tokenizers.deit import DeitEmbedder
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, run


def test_tiny_deit_hf_matches_transformers(tiny_deit_hf: Reference) -> None:
    model = load_pretrained("deit", tiny_deit_hf.folder)
    assert isinstance(model.embedder, DeitEmbedder) and model.config.prefix_tokens == 2
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = tiny_deit_hf.model(pixel_values=pixels).last_hidden_state  # (B, 2 + 16, D)
    assert_match("deit (tiny random, transformers)", run(model, {"pixels": pixels}), expected)


def test_tiny_distilled_deit_timm_matches_timm(tiny_deit_timm: Reference) -> None:
    model = load_pretrained("vit_timm", tiny_deit_timm.folder)
    assert isinstance(model.embedder, DeitEmbedder)
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = tiny_deit_timm.model.forward_features(pixels)
    assert_match("deit (tiny random, timm distilled)", run(model, {"pixels": pixels}), expected)


def test_deit_export_round_trips(tiny_deit_hf: Reference, tmp_path: Path) -> None:
    from transformers import DeiTModel

    model = load_pretrained("deit", tiny_deit_hf.folder)
    out = export_pretrained(model.encoder, model.embedder, model.config, tmp_path / "export")
    exported = DeiTModel.from_pretrained(out, add_pooling_layer=False).eval()
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = tiny_deit_hf.model(pixel_values=pixels).last_hidden_state
        again = exported(pixel_values=pixels).last_hidden_state
    assert_match("deit export (transformers)", again, expected)
    back = load_pretrained("deit", out)
    for key, tensor in model.embedder.state_dict().items():
        assert torch.equal(tensor, back.embedder.state_dict()[key]), key
    for key, tensor in model.encoder.state_dict().items():
        assert torch.equal(tensor, back.encoder.state_dict()[key]), key


def test_deit_positions_resample_around_both_prefix_tokens(tiny_deit_hf: Reference) -> None:
    model = load_pretrained("deit", tiny_deit_hf.folder, grid=(6, 6), resample_positions=True)
    assert model.encoder.config.max_len == 2 + 36
    assert model.tokenizer is not None and model.tokenizer.image_size == (24, 24)
    hidden = run(model, {"pixels": torch.randn(1, 3, 24, 24)})
    assert hidden.shape == (1, 38, 32)
