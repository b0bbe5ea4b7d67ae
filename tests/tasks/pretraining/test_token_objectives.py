from __future__ import annotations

import pytest
import torch

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining import CausalLanguageModel, MaskedPatchModel, MaskedTokenModel
from tabrasa.tokenizers.bytes import CLS_ID as CLS
from tabrasa.tokenizers.bytes import EOS_ID as EOS
from tabrasa.tokenizers.bytes import MASK_ID as MASK
from tabrasa.tokenizers.bytes import PAD_ID as PAD
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.esm import EsmProteinTokenizer
from tabrasa.tokenizers.protein import PAD_ID
from tabrasa.tokenizers.text import TextTokenizer
from tests.tasks.pretraining.conftest import CORPUS, encoder


def test_mlm_scores_only_chosen_real_non_special_tokens(text_tokenizer: TextTokenizer) -> None:
    model = MaskedTokenModel(text_tokenizer, encoder())
    batch = text_tokenizer.encode_batch(CORPUS[:4])
    corrupted, chosen = model.corrupt(batch)
    real = batch["attention_mask"]
    special = torch.isin(batch["input_ids"], model.special_ids)
    assert chosen.any() and not (chosen & (~real | special)).any()
    assert torch.equal(corrupted["input_ids"][~chosen], batch["input_ids"][~chosen])
    out = model.step(batch)
    assert out.count == chosen.sum() and torch.isfinite(out.loss)


def test_mlm_replacement_shares_are_80_10_10(text_tokenizer: TextTokenizer) -> None:
    model = MaskedTokenModel(text_tokenizer, encoder(), mask_ratio=0.5)
    batch = text_tokenizer.encode_batch(CORPUS)
    masked = changed = total = 0
    for _ in range(40):
        corrupted, chosen = model.corrupt(batch)
        ids = corrupted["input_ids"][chosen]
        masked += int((ids == model.vocab.mask_id).sum())
        changed += int(((ids != batch["input_ids"][chosen]) & (ids != model.vocab.mask_id)).sum())
        total += int(chosen.sum())
    assert abs(masked / total - 0.8) < 0.03
    assert 0.06 < changed / total < 0.11  # 10% random, a few of which redraw the same token


def test_batch_without_maskable_tokens_gives_zero_loss_and_finite_grads() -> None:
    tokenizer = EsmProteinTokenizer(max_length=16)
    model = MaskedTokenModel(tokenizer, encoder(positions="rotary"))
    batch = {"input_ids": torch.full((2, 5), PAD_ID), "attention_mask": torch.zeros(2, 5, dtype=torch.bool)}
    out = model.step(batch)
    out.loss.backward()
    assert out.loss.item() == 0.0 and out.count == 0
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_tied_head_shares_the_embedding_and_can_be_untied(text_tokenizer: TextTokenizer) -> None:
    tied = MaskedTokenModel(text_tokenizer, encoder())
    untied = MaskedTokenModel(text_tokenizer, encoder(), tie_weights=False)
    extra = sum(p.numel() for p in untied.parameters()) - sum(p.numel() for p in tied.parameters())
    assert extra == text_tokenizer.vocab_size * 32
    batch = text_tokenizer.encode_batch(CORPUS[:2])
    tied.step(batch).loss.backward()
    assert tied.embedder.token_embed.weight.grad is not None


def test_bad_settings_are_user_errors(text_tokenizer: TextTokenizer) -> None:
    with pytest.raises(UserError, match="mask_ratio"):
        MaskedTokenModel(text_tokenizer, encoder(), mask_ratio=1.0)
    with pytest.raises(UserError, match="causal: true"):
        CausalLanguageModel(text_tokenizer, encoder())
    with pytest.raises(UserError, match="reconstruction target"):
        MaskedPatchModel(text_tokenizer, encoder())


def test_causal_lm_loss_ignores_padding(text_tokenizer: TextTokenizer) -> None:
    model = CausalLanguageModel(text_tokenizer, encoder(causal=True)).eval()
    alone = text_tokenizer.encode_batch([CORPUS[1]])
    padded = text_tokenizer.encode_batch([CORPUS[1], CORPUS[0] + " " + CORPUS[2]])
    one, two = model.step(alone), model.step({k: v[:1] for k, v in padded.items()})
    assert one.count == two.count == alone["attention_mask"].sum() - 1
    torch.testing.assert_close(one.loss_sum, two.loss_sum, atol=1e-5, rtol=1e-5)
    model.stats["val_stats"].update(one.loss_sum, one.correct, one.count)
    values = model.stats["val_stats"].compute()
    assert values["ppl"] == pytest.approx(float(torch.exp(one.loss.detach())), rel=1e-5)


def test_bytes_pretrain_with_masked_tokens_and_patches_say_why_they_cannot() -> None:
    tokenizer = ByteTokenizer(max_length=64)
    model = MaskedTokenModel(tokenizer, encoder(), mask_ratio=0.3)
    batch = tokenizer.collate([tokenizer(t) for t in CORPUS[:4]])
    corrupted, chosen = model.corrupt(batch)
    specials = torch.tensor([PAD, CLS, EOS, MASK])
    assert chosen.any() and not (chosen & torch.isin(batch["input_ids"], specials)).any()
    assert (corrupted["input_ids"][chosen] == MASK).any()  # BERT's 80% <mask>, here id 259
    out = model.step(batch)
    assert out.count == chosen.sum() and torch.isfinite(out.loss)
    assert model.embedder.token_embed.weight.shape[0] == 260  # the output is tied to the byte table
    with pytest.raises(ValueError, match=r"patch_size=4 puts 4 bytes in a token.*patch_size: 1"):
        MaskedTokenModel(ByteTokenizer(patch_size=4), encoder())
