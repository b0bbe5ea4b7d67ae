"""ESM-2: Hugging Face EsmModel (`esm2`) and fair-esm ESM2 (`esm2_fair`), token dropout and padding."""

from __future__ import annotations

import pytest
import torch

from tabrasa.pretrained import PretrainedSource, check_checkpoint, load_into, load_pretrained
from tabrasa.tokenizers.esm import EsmEmbedder, EsmProteinTokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, hf_file_state, run

SEQUENCES = ["MKTAYIAKQRQISFVKSHFSRQ", "GSHMLE", "ACDEFGHIKLMNPQRSTVWY"]


def protein_batch(tokenizer: ProteinTokenizer) -> dict[str, torch.Tensor]:
    batch = tokenizer.collate([tokenizer(s) for s in SEQUENCES])
    batch["input_ids"][2, 5] = 32  # one <mask>: token dropout rescales that sequence differently
    return batch


def test_tiny_esm2_matches_transformers(tiny_esm: Reference) -> None:
    model = load_pretrained("esm2", tiny_esm.folder)
    assert isinstance(model.tokenizer, EsmProteinTokenizer) and isinstance(model.embedder, EsmEmbedder)
    batch = protein_batch(model.tokenizer)
    mask = batch["attention_mask"]
    with torch.no_grad():
        expected = tiny_esm.model(input_ids=batch["input_ids"], attention_mask=mask.long()).last_hidden_state
    assert_match("esm2 (tiny random, HF)", run(model, batch), expected, mask)


def test_tiny_esm2_matches_fair_esm(tiny_esm_fair: Reference) -> None:
    config = {"num_layers": 2, "embed_dim": 32, "attention_heads": 4}
    model = load_pretrained("esm2_fair", tiny_esm_fair.folder / "esm2.pt", config=config)
    batch = protein_batch(EsmProteinTokenizer())
    mask = batch["attention_mask"]
    with torch.no_grad():
        expected = tiny_esm_fair.model(batch["input_ids"], repr_layers=[2])["representations"][2]
    assert_match("esm2_fair (tiny random, fair-esm)", run(model, batch), expected, mask)


def test_esm2_650m_key_maps_on_meta() -> None:
    from esm.model.esm2 import ESM2
    from transformers import EsmConfig, EsmModel

    config = EsmConfig(
        vocab_size=33, hidden_size=1280, num_hidden_layers=33, num_attention_heads=20, intermediate_size=5120,
        position_embedding_type="rotary", token_dropout=True, mask_token_id=32, pad_token_id=1,
        emb_layer_norm_before=False, max_position_embeddings=1026, layer_norm_eps=1e-5,
    )  # fmt: skip
    pconf = check_checkpoint("esm2", hf_file_state(EsmModel, config), config.to_dict())
    assert (pconf.encoder.dim, pconf.encoder.depth, pconf.encoder.positions) == (1280, 33, "rotary")
    with torch.device("meta"):
        fair = ESM2()  # esm2_t33_650M_UR50D's shape
    check_checkpoint(
        "esm2_fair", fair.state_dict(), {"num_layers": 33, "embed_dim": 1280, "attention_heads": 20}
    )


def test_a_plain_protein_embedder_is_refused(tiny_esm: Reference) -> None:
    """Loading ESM weights into an embedder without ESM's 0.88 scaling would change the function."""
    model = load_pretrained("esm2", tiny_esm.folder)
    plain = ProteinTokenizer().embedder(32)
    with pytest.raises(TypeError, match="EsmEmbedder"):
        load_into(PretrainedSource("esm2", str(tiny_esm.folder)), model.encoder, plain)


def test_an_embedder_without_token_dropout_is_refused(tiny_esm: Reference) -> None:
    model = load_pretrained("esm2", tiny_esm.folder)
    with pytest.raises(ValueError, match="token_dropout: embedder False, checkpoint True"):
        load_into(
            PretrainedSource("esm2", str(tiny_esm.folder)),
            model.encoder,
            EsmEmbedder(32, token_dropout=False),
        )
