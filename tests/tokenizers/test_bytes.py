"""The byte tokenizer: fixed ids for ASCII and multi-byte UTF-8, explicit truncation, a matching embedder;
bytes in patches of patch_size a token, and their embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining.mlm import token_table
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.bytes import (
    CLS_ID,
    EOS_ID,
    PAD_ID,
    VOCAB_SIZE,
    BytePatchEmbedder,
    BytePatchEmbedderSpec,
    ByteTokenizer,
    ByteTokenizerSpec,
)
from tabrasa.tokenizers.text import TextEmbedder, TextEmbedderSpec

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_ascii_ids_are_the_bytes_between_cls_and_eos() -> None:
    assert ByteTokenizer()("Hi!")["input_ids"].tolist() == [257, 72, 105, 33, 258]
    assert (CLS_ID, EOS_ID, PAD_ID, VOCAB_SIZE) == (257, 258, 256, 260)


def test_multi_byte_utf8_is_one_token_per_byte() -> None:
    tok = ByteTokenizer()
    assert tok("é")["input_ids"].tolist() == [257, 0xC3, 0xA9, 258]
    assert tok("苹果")["input_ids"].tolist() == [257, 0xE8, 0x8B, 0xB9, 0xE6, 0x9E, 0x9C, 258]
    assert tok.decode(tok("苹果 é")["input_ids"].tolist()) == "苹果 é"


@pytest.mark.parametrize(
    ("policy", "kept"),
    [("head", b"abcdef"), ("tail", b"uvwxyz"), ("head_tail", b"a" + b"vwxyz")],
)
def test_truncation_keeps_the_specials_and_counts_the_cut(policy: str, kept: bytes) -> None:
    tok = ByteTokenizer(max_length=8, truncation=policy)  # type: ignore[arg-type]
    out = tok("abcdefghijklmnopqrstuvwxyz")
    assert out["input_ids"].tolist() == [CLS_ID, *kept, EOS_ID]
    assert int(out["truncated"]) == 26 - 6


def test_error_policy_and_bad_inputs_name_the_fix() -> None:
    with pytest.raises(ValueError, match="more than max_length=4; raise max_length"):
        ByteTokenizer(max_length=4, truncation="error")("abcd")
    with pytest.raises(TypeError, match="ByteTokenizer takes str; decode it first"):
        ByteTokenizer()(b"raw")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="truncation='middle' is not known"):
        ByteTokenizer(truncation="middle")  # type: ignore[arg-type]


def test_batch_pads_with_pad_and_feeds_its_embedder() -> None:
    tok = ByteTokenizer()
    assert isinstance(tok, Tokenizer)
    batch = tok.encode_batch(["ab", {"text": "abcd", "label": 1}, "é"])
    assert batch["input_ids"].tolist()[0] == [257, 97, 98, 258, PAD_ID, PAD_ID]
    assert batch["attention_mask"].sum(1).tolist() == [4, 6, 4]
    tokens = tok.embedder(32)(batch)
    assert tokens.x.shape == (3, 6, 32) and torch.equal(tokens.mask, batch["attention_mask"])


# Patches of bytes (MEGABYTE's global model): patch_size bytes a token, the last patch filled with <pad>.


def test_patches_cut_the_byte_sequence_in_order_and_fill_the_last_with_pad() -> None:
    assert ByteTokenizer(patch_size=4)("Hi!")["input_ids"].tolist() == [
        [257, 72, 105, 33],
        [258, 256, 256, 256],
    ]
    assert ByteTokenizer(patch_size=3)("é")["input_ids"].tolist() == [
        [257, 0xC3, 0xA9],
        [258, PAD_ID, PAD_ID],
    ]
    assert ByteTokenizer(patch_size=4)("ab")["input_ids"].tolist() == [[257, 97, 98, 258]]  # no empty patch


def test_a_patch_batch_pads_and_masks_whole_tokens() -> None:
    tok = ByteTokenizer(patch_size=4)
    batch = tok.encode_batch([{"text": "ab", "label": 0}, {"text": "abcdefgh", "label": 1}])
    assert batch["input_ids"].shape == (2, 3, 4)
    assert batch["input_ids"][0].tolist() == [[257, 97, 98, 258], [PAD_ID] * 4, [PAD_ID] * 4]
    assert batch["input_ids"][1, 2].tolist() == [104, 258, PAD_ID, PAD_ID]  # real, with <pad> bytes
    assert batch["attention_mask"].tolist() == [[True, False, False], [True, True, True]]
    assert batch["label"].tolist() == [0, 1] and batch["truncated"].tolist() == [0, 0]


@pytest.mark.parametrize(
    ("policy", "kept"),
    [("head", b"abcdefgh"), ("tail", b"stuvwxyz"), ("head_tail", b"ab" + b"uvwxyz")],
)
def test_truncation_with_patches_still_cuts_and_counts_bytes(policy: str, kept: bytes) -> None:
    tok = ByteTokenizer(max_length=10, truncation=policy, patch_size=4)  # type: ignore[arg-type]
    out = tok("abcdefghijklmnopqrstuvwxyz")
    flat = [CLS_ID, *kept, EOS_ID, PAD_ID, PAD_ID]  # 10 bytes, then <pad> to 12
    assert out["input_ids"].tolist() == [flat[0:4], flat[4:8], flat[8:12]]
    assert int(out["truncated"]) == 26 - 8  # bytes removed, not tokens
    assert tok.max_tokens == 3 and tok.decode(out["input_ids"].tolist()) == kept.decode()


def test_the_patch_embedder_gives_one_token_a_patch_and_one_byte_moves_only_its_token() -> None:
    tok = ByteTokenizer(patch_size=4)
    embedder = tok.embedder(32)
    assert isinstance(embedder, BytePatchEmbedder) and embedder.byte_dim == 8  # ceil(32 / 4)
    batch = tok.encode_batch(["abcdefghij", "abcdeXghij"])  # byte 6 of 13 (token 1) differs
    with torch.no_grad():
        tokens = embedder(batch)
    assert tokens.x.shape == (2, 3, 32) and torch.equal(tokens.mask, batch["attention_mask"])
    # equal up to float rounding: BLAS may block two rows of one batch differently, so not bit-equal
    torch.testing.assert_close(tokens.x[0, [0, 2]], tokens.x[1, [0, 2]], rtol=0, atol=1e-6)
    assert not torch.allclose(tokens.x[0, 1], tokens.x[1, 1])
    with torch.no_grad():  # the bytes' order inside a patch is seen: "ab" is not "ba"
        swapped = embedder(tok.encode_batch(["ba"])).x
        assert not torch.allclose(swapped[0, 0], embedder(tok.encode_batch(["ab"])).x[0, 0])


def test_pad_bytes_contribute_nothing_whatever_the_pad_row_holds() -> None:
    embedder = BytePatchEmbedder(32, patch_size=4)
    assert not embedder.byte_embed.weight[PAD_ID].any()
    ids = torch.tensor([[[97, 98, PAD_ID, PAD_ID], [PAD_ID] * 4]])  # 'ab<pad><pad>', then a padding token
    with torch.no_grad():
        before = embedder({"input_ids": ids})
        embedder.byte_embed.weight[PAD_ID].normal_()
        after = embedder({"input_ids": ids})
        embedder.byte_embed.weight[98].normal_()  # counter-check: a real byte's row does move its token
        moved = embedder({"input_ids": ids}).x
    assert torch.equal(after.x, before.x) and not after.x[0, 1].any()
    assert before.mask.tolist() == [[True, False]]  # no attention_mask given: any real byte makes it real
    assert not torch.allclose(moved[0, 0], before.x[0, 0])


def test_patch_size_one_is_the_byte_tokenizer_of_before() -> None:
    tok = ByteTokenizer(max_length=16, patch_size=1)
    assert tok("Hi!")["input_ids"].tolist() == [257, 72, 105, 33, 258]
    embedder = tok.embedder(32)
    assert type(embedder) is TextEmbedder and embedder.to_spec() == TextEmbedderSpec(VOCAB_SIZE, PAD_ID, 0)
    old_file = {"kind": "bytes", "max_length": 16, "truncation": "head_tail"}
    assert tok.to_spec().to_json() == old_file  # the file it always wrote
    assert ByteTokenizerSpec.from_json(old_file) == tok.to_spec()  # and an old file reads as patch_size 1
    assert tok.to_spec().fitted(64, None).max_length == 64


def test_patch_specs_round_trip_and_fit_the_positions() -> None:
    tok = ByteTokenizer(max_length=10, truncation="tail", patch_size=4)
    spec = tok.to_spec()
    again = ByteTokenizerSpec.from_json(json.loads(json.dumps(spec.to_json())))
    assert again == spec and again.patch_size == 4
    rebuilt = ByteTokenizer.from_spec(again)
    texts = ["héllo wörld, longer than ten bytes", "ok"]
    assert torch.equal(rebuilt.encode_batch(texts)["input_ids"], tok.encode_batch(texts)["input_ids"])

    embedder = BytePatchEmbedder(16, patch_size=4, byte_dim=6)
    espec = embedder.to_spec()
    assert BytePatchEmbedderSpec.from_json(json.loads(json.dumps(espec.to_json()))) == espec
    twin = BytePatchEmbedder.from_spec(espec, 16)
    twin.load_state_dict(embedder.state_dict(), strict=True)
    batch = tok.encode_batch(texts)
    with torch.no_grad():
        assert torch.equal(twin(batch).x, embedder(batch).x)

    fitted = spec.fitted(256, None)  # 256 positions hold 256 tokens of 4 bytes: 1,024 bytes
    assert fitted.max_length == 1024 and ByteTokenizer.from_spec(fitted).max_tokens == 256


def test_the_patch_preset_fits_the_backbone_positions() -> None:
    config = yaml.safe_load((CONFIGS / "text" / "imdb_byte_patches.yaml").read_text())
    tok = ByteTokenizer(**config["data"]["init_args"]["tokenizer"]["init_args"])
    max_len = yaml.safe_load((CONFIGS / "backbone" / "small.yaml").read_text())["init_args"]["config"][
        "max_len"
    ]
    assert (tok.patch_size, tok.max_length, tok.max_tokens) == (4, 1024, 256) and tok.max_tokens <= max_len
    assert tok("x" * 5000)["input_ids"].shape == (256, 4)


def test_bad_patch_settings_name_the_setting_and_the_fix() -> None:
    for bad in (0, -2, True, 2.0):
        with pytest.raises(ValueError, match=f"patch_size={bad!r} must be a whole number of bytes"):
            ByteTokenizer(patch_size=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"max_length=2 leaves no room .*set max_length to at least 3"):
        ByteTokenizer(max_length=2, patch_size=4)
    with pytest.raises(ValueError, match="patch_size=0 and byte_dim=None must be >= 1"):
        BytePatchEmbedder(32, patch_size=0)
    with pytest.raises(
        ValueError, match=r"reads \(batch, tokens, 4\); encode with ByteTokenizer\(patch_size=4\)"
    ):
        BytePatchEmbedder(32, patch_size=4)(ByteTokenizer().encode_batch(["one byte a token"]))
    with pytest.raises(ValueError, match="ids in \\[0, 300\\]"):
        BytePatchEmbedder(32, patch_size=2)({"input_ids": torch.tensor([[[0, 300]]])})


def test_a_patch_embedder_offers_no_token_table_to_tie_to() -> None:
    """Its (260, byte_dim) byte table is no (V, dim) token table: token-predicting pretraining refuses it."""
    with pytest.raises(UserError, match="needs an embedder with a token table"):
        token_table(ByteTokenizer(patch_size=4).embedder(32))


def test_a_byte_patch_classifier_can_fit_what_it_is_given() -> None:
    """The preset's failure to learn IMDB (README) is not a model that cannot learn: it fits a batch."""
    from tabrasa.backbone import Encoder, EncoderConfig
    from tabrasa.tasks import Classifier

    torch.manual_seed(0)
    tokenizer = ByteTokenizer(max_length=64, patch_size=4)
    texts = ["a wonderful film, loved it", "dull and far too long", "great acting, a joy",
             "awful plot, i left early", "moving and funny", "a boring mess"] * 2  # fmt: skip
    batch = tokenizer.collate([{**tokenizer(t), "label": torch.tensor(i % 2)} for i, t in enumerate(texts)])
    model = Classifier(tokenizer, 2, Encoder(EncoderConfig(dim=64, depth=2, heads=4, max_len=32)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(150):
        optimizer.zero_grad()
        loss = model.loss(model(batch), batch["label"])
        loss.backward()
        optimizer.step()
    model.eval()
    assert (model.predict_step(batch, 0).argmax(-1) == batch["label"]).all()
