"""load_into for task configs, cross-modal transfer, export → import, and text position resampling."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from tabrasa.backbone import Encoder
from tabrasa.pretrained import PretrainedSource, export_pretrained, load_into, load_pretrained
from tabrasa.tokenizers.text import TextEmbedder
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, run

FAMILIES = ["bert", "gpt2", "vit_hf", "vit_timm", "esm2", "esm2_fair", "ast"]
FAIR_CONFIG = {"num_layers": 2, "embed_dim": 32, "attention_heads": 4}


def load_tiny(family: str, request: pytest.FixtureRequest):
    fixture = {"esm2": "tiny_esm", "esm2_fair": "tiny_esm_fair"}.get(family, f"tiny_{family}")
    reference: Reference = request.getfixturevalue(fixture)
    if family == "esm2_fair":
        return load_pretrained(family, reference.folder / "esm2.pt", config=FAIR_CONFIG)
    return load_pretrained(family, reference.folder)


@pytest.mark.parametrize("family", FAMILIES)
def test_export_then_import_is_exact(family: str, request: pytest.FixtureRequest, tmp_path) -> None:
    model = load_tiny(family, request)
    export_pretrained(model.encoder, model.embedder, model.config, tmp_path, model.folder)
    config = FAIR_CONFIG if family == "esm2_fair" else None
    again = load_pretrained(family, tmp_path, config=config)
    for mine, theirs in ((model.encoder, again.encoder), (model.embedder, again.embedder)):
        state = theirs.state_dict()
        assert all(torch.equal(tensor, state[key]) for key, tensor in mine.state_dict().items())
    assert again.config.encoder == model.config.encoder


def test_an_exported_bert_loads_in_transformers(tiny_bert: Reference, tmp_path) -> None:
    from transformers import BertModel

    model = load_pretrained("bert", tiny_bert.folder)
    export_pretrained(model.encoder, model.embedder, model.config, tmp_path, model.folder)
    reference = BertModel.from_pretrained(str(tmp_path), add_pooling_layer=False).eval()
    ids = torch.tensor([[2, 7, 9, 3]])
    with torch.no_grad():
        expected = reference(input_ids=ids).last_hidden_state
    assert_match("bert (export → transformers)", run(model, {"input_ids": ids}), expected)


def test_load_into_lists_every_differing_backbone_field(tiny_bert: Reference) -> None:
    model = load_pretrained("bert", tiny_bert.folder)
    wrong = Encoder(dataclasses.replace(model.config.encoder, depth=3, norm_placement="pre", final_norm=True))
    with pytest.raises(ValueError, match="does not match") as err:
        load_into(PretrainedSource("bert", str(tiny_bert.folder)), wrong, model.embedder)
    message = str(err.value)
    assert "depth: backbone 3, checkpoint 2" in message and "norm_placement" in message
    assert "final_norm" in message


def test_load_into_takes_run_time_fields_from_the_task(tiny_bert: Reference) -> None:
    model = load_pretrained("bert", tiny_bert.folder)
    backbone = Encoder(dataclasses.replace(model.config.encoder, dropout=0.1, checkpointing=True))
    embedder = TextEmbedder(model.embedder.vocab_size, 32, type_vocab_size=2)
    load_into(PretrainedSource("bert", str(tiny_bert.folder)), backbone, embedder)
    assert torch.equal(backbone.blocks[1].mlp.fc1.weight, model.encoder.blocks[1].mlp.fc1.weight)
    assert torch.equal(embedder.token_embed.weight, model.embedder.token_embed.weight)


def test_a_vision_backbone_behind_a_text_embedder(tiny_vit_hf: Reference) -> None:
    """Lu et al. 2021: a backbone pretrained on images, fine-tuned behind another modality's tokenizer."""
    vit = load_pretrained("vit_hf", tiny_vit_hf.folder)
    backbone, text = Encoder(vit.config.encoder), TextEmbedder(40, 32)
    before = text.token_embed.weight.clone()
    load_into(PretrainedSource("vit_hf", str(tiny_vit_hf.folder), load_embedder=False), backbone, text)
    assert torch.equal(backbone.blocks[0].attn.qkv.weight, vit.encoder.blocks[0].attn.qkv.weight)
    assert torch.equal(text.token_embed.weight, before)
    tokens = text({"input_ids": torch.randint(0, 40, (2, 9))})
    backbone(tokens.x, tokens.mask).sum().backward()
    assert backbone.blocks[0].attn.qkv.weight.grad is not None


def test_an_image_embedder_is_refused_for_text_weights(tiny_bert: Reference, tiny_vit_hf: Reference) -> None:
    model = load_pretrained("bert", tiny_bert.folder)
    image = load_pretrained("vit_hf", tiny_vit_hf.folder).embedder
    with pytest.raises(TypeError, match="TextEmbedder"):
        load_into(PretrainedSource("bert", str(tiny_bert.folder)), model.encoder, image)


def test_text_positions_resample_only_on_request(tiny_bert: Reference) -> None:
    model = load_pretrained("bert", tiny_bert.folder)  # a 24-row table
    table = model.encoder.positions.weight
    short_backbone = Encoder(dataclasses.replace(model.config.encoder, max_len=16))
    source = PretrainedSource("bert", str(tiny_bert.folder))
    with pytest.raises(ValueError, match="resample_positions: true"):
        load_into(source, short_backbone, model.embedder)
    load_into(dataclasses.replace(source, resample_positions=True), short_backbone, model.embedder)
    assert torch.equal(short_backbone.positions.weight, table[:16])  # shorter: the first rows, exactly

    longer = load_pretrained("bert", tiny_bert.folder, max_len=47, resample_positions=True)
    grown = longer.encoder.positions.weight
    assert grown.shape == (47, 32) and torch.allclose(grown[::2], table, atol=1e-6)  # 24 → 47: old rows kept
    assert longer.tokenizer is not None and longer.tokenizer.max_length == 47


def test_load_into_a_grid_backbone_of_another_size(tiny_vit_hf: Reference) -> None:
    vit = load_pretrained("vit_hf", tiny_vit_hf.folder)  # 4×4 patches + CLS
    backbone = Encoder(dataclasses.replace(vit.config.encoder, max_len=1 + 36))
    source = PretrainedSource("vit_hf", str(tiny_vit_hf.folder), resample_positions=True)
    config = load_into(source, backbone, vit.embedder)
    assert config.grid == (6, 6) and config.tokenizer is not None and config.tokenizer.image_size == (24, 24)
    tokens = vit.embedder({"pixels": torch.randn(1, 3, 24, 24)})
    assert backbone(tokens.x, tokens.mask).shape == (1, 37, 32)
