"""Typed embedder and tokenizer specs: every registered class round-trips through its spec and JSON."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from tabrasa.pretrained import load_pretrained, save_tabrasa
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.specs import (
    EMBEDDERS,
    TOKENIZERS,
    build_embedder,
    build_tokenizer,
    embedder_spec,
    tokenizer_spec,
)
from tabrasa.tokenizers.ast import ASTEmbedder, ASTTokenizer
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.esm import EsmEmbedder, EsmProteinTokenizer
from tabrasa.tokenizers.image import ImageEmbedder, ImageTokenizer
from tabrasa.tokenizers.specs import Spec, register_tokenizer
from tabrasa.tokenizers.text import TextEmbedder
from tabrasa.tokenizers.whisper import WhisperEmbedder, WhisperTokenizer
from tests.pretrained.conftest import Reference

EMBEDDER_CASES = [
    TextEmbedder(50, 8, pad_id=1, type_vocab_size=2),
    ImageEmbedder(1, (4, 2), 8, cls_token=False),
    EsmEmbedder(8, token_dropout=False),
    ASTEmbedder(8, 36, 46, (16, 16), (10, 10)),
    WhisperEmbedder(8, n_mels=12, max_tokens=30),
]
TOKENIZER_CASES = [
    ImageTokenizer(patch_size=4, channels=3, image_size=(8, 12), mean=(0.1, 0.2, 0.3), std=0.5),
    EsmProteinTokenizer(64, "tail", token_dropout=False),
    ASTTokenizer(36, 46, mean=-1.0, std=2.0),
    WhisperTokenizer(n_mels=12, seconds=2.0),
]


@pytest.mark.parametrize("embedder", EMBEDDER_CASES, ids=lambda e: type(e).__name__)
def test_an_embedder_rebuilds_from_its_spec_read_back_from_json(embedder) -> None:
    spec = embedder.to_spec()
    again = embedder_spec(json.loads(json.dumps(spec.to_json())))
    assert again == spec and type(again) is type(spec)
    rebuilt = build_embedder(again, embedder.dim)
    assert type(rebuilt) is type(embedder) and rebuilt.to_spec() == spec
    shapes = {k: v.shape for k, v in embedder.state_dict().items()}
    assert {k: v.shape for k, v in rebuilt.state_dict().items()} == shapes


@pytest.mark.parametrize("tokenizer", TOKENIZER_CASES, ids=lambda t: type(t).__name__)
def test_a_tokenizer_rebuilds_from_its_spec_read_back_from_json(tokenizer, tmp_path) -> None:
    spec = tokenizer.to_spec()
    again = tokenizer_spec(json.loads(json.dumps(spec.to_json())))
    assert again == spec
    rebuilt = TOKENIZERS[spec.kind][0].from_spec(again, tmp_path)  # type: ignore[attr-defined]
    assert type(rebuilt) is type(tokenizer) and rebuilt.to_spec() == spec


def test_every_registered_kind_has_its_own_spec_type() -> None:
    for registry in (EMBEDDERS, TOKENIZERS):
        assert all(spec.kind == kind for kind, (_, spec) in registry.items())
        assert len({spec for _, spec in registry.values()}) == len(registry)


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"kind='conv' is not known; expected one of ast, .*, text, whisper"):
        embedder_spec({"kind": "conv", "dim": 3})


def test_a_tokenizer_module_of_your_own_registers_its_kinds_and_rebuilds_from_them(tmp_path) -> None:
    """The one-file contract: a tokenizer defined outside tabrasa (here, in this test) becomes readable
    from a checkpoint by its own register_* calls, with no edit to tabrasa."""

    @dataclasses.dataclass(frozen=True)
    class VowelSpec(Spec):
        kind = "test_vowels"
        max_length: int

    class VowelTokenizer(ByteTokenizer):
        def to_spec(self) -> VowelSpec:  # type: ignore[override]
            return VowelSpec(self.max_length)

        @classmethod
        def from_spec(cls, spec: VowelSpec, folder: object = None) -> VowelTokenizer:  # type: ignore[override]
            return cls(spec.max_length)

    register_tokenizer(VowelTokenizer, VowelSpec)
    try:
        rebuilt = build_tokenizer(tokenizer_spec(VowelTokenizer(7).to_spec().to_json()), tmp_path)
        assert type(rebuilt) is VowelTokenizer and rebuilt.max_length == 7
        with pytest.raises(ValueError, match=r"test_vowels.*already VowelTokenizer's"):
            register_tokenizer(ByteTokenizer, VowelSpec)  # one kind, one class
    finally:
        del TOKENIZERS["test_vowels"]


def test_a_converted_checkpoint_json_still_names_its_kinds(tiny_bert: Reference, tmp_path) -> None:
    """The on-disk format stays readable: a `kind` and plain fields, read back to the same typed config."""
    model = load_pretrained("bert", tiny_bert.folder)
    save_tabrasa(model.encoder, model.embedder, model.config, tmp_path, model.folder)
    document = json.loads((tmp_path / "tabrasa.json").read_text())
    assert document["embedder"] == {"kind": "text", "vocab_size": 60, "pad_id": 0, "type_vocab_size": 2}
    assert document["tokenizer"]["kind"] == "text" and document["tokenizer"]["file"] == "tokenizer.json"
    body = {k: v for k, v in document.items() if k not in ("format", "version")}
    assert PretrainedConfig.from_json(body) == model.config
    again = load_pretrained("tabrasa", tmp_path)
    ids = torch.tensor([[2, 7, 9, 3]])
    assert torch.equal(again.embedder({"input_ids": ids}).x, model.embedder({"input_ids": ids}).x)
