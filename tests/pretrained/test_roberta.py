"""RoBERTa (`roberta`): positions counted from the padding index + 1, one token type."""

from __future__ import annotations

from pathlib import Path

import torch

from tabrasa.pretrained import export_pretrained, load_pretrained
from tabrasa.tokenizers.text import TextEmbedder
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, run

PAD = 1


def _batch() -> dict[str, torch.Tensor]:
    """Two right-padded sequences of ids that avoid the padding id."""
    ids = torch.tensor([[0, 5, 9, 17, 23, 40, 2, PAD, PAD], [0, 11, 30, 44, 8, 6, 12, 49, 2]])
    return {"input_ids": ids, "attention_mask": ids != PAD}


def test_tiny_roberta_matches_transformers(tiny_roberta: Reference) -> None:
    model = load_pretrained("roberta", tiny_roberta.folder)
    assert model.config.encoder.max_len == 18 - PAD - 1  # the rows real tokens can reach
    assert isinstance(model.embedder, TextEmbedder) and model.embedder.type_embed is not None
    batch = _batch()
    with torch.no_grad():
        expected = tiny_roberta.model(**batch).last_hidden_state
    assert_match("roberta (tiny random)", run(model, batch), expected, batch["attention_mask"])


def test_roberta_export_loads_in_transformers_and_round_trips(
    tiny_roberta: Reference, tmp_path: Path
) -> None:
    from transformers import RobertaModel

    model = load_pretrained("roberta", tiny_roberta.folder)
    out = export_pretrained(model.encoder, model.embedder, model.config, tmp_path / "export")
    exported = RobertaModel.from_pretrained(out, add_pooling_layer=False).eval()
    table = exported.embeddings.position_embeddings.weight
    assert table.shape[0] == 18 and not bool(table[: PAD + 1].any())  # the unread rows come back as zeros
    batch = _batch()
    with torch.no_grad():
        expected = tiny_roberta.model(**batch).last_hidden_state
        again = exported(**batch).last_hidden_state
    assert_match("roberta export (transformers)", again, expected, batch["attention_mask"])

    back = load_pretrained("roberta", out)
    for mine, theirs in ((model.encoder, back.encoder), (model.embedder, back.embedder)):
        for key, tensor in mine.state_dict().items():
            assert torch.equal(tensor, theirs.state_dict()[key]), key
