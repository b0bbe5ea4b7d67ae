"""A text checkpoint's token table loads only under the vocabulary it was trained with: two vocabularies of
one size fit the same shapes while every id names another token."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig, PretrainedSource
from tabrasa.pretrained.tabrasa_format import save_tabrasa
from tabrasa.tasks import Classifier
from tabrasa.tokenizers.text import TextTokenizer, load_subword_tokenizer, train_subword_tokenizer

CONFIG = EncoderConfig(dim=32, depth=1, heads=4, max_len=32)
FILMS = ["a good film", "a bad film", "great acting", "awful plot", "the plot was thin"] * 8
PROTEINS = ["the cell wall holds a membrane", "a protein folds in the membrane", "wall and cell"] * 8


def _tokenizer(corpus: list[str]) -> TextTokenizer:
    return TextTokenizer(train_subword_tokenizer(corpus, vocab_size=60), max_length=16)


def _checkpoint(tokenizer: TextTokenizer, folder: Path) -> Path:
    model = Classifier(tokenizer, 2, Encoder(CONFIG))
    folder.mkdir(parents=True)
    tokenizer.hf.save(str(folder / "tokenizer.json"))
    pconf = PretrainedConfig("tabrasa", CONFIG, model.embedder.to_spec(), tokenizer.to_spec("tokenizer.json"))
    return save_tabrasa(model.backbone, model.embedder, pconf, folder, tokenizer_folder=folder)


def test_the_same_vocabulary_loads_the_token_table(tmp_path: Path) -> None:
    folder = _checkpoint(_tokenizer(FILMS), tmp_path / "ckpt")
    # The checkpoint's own file, as `tokenizer_path` gives it: training again, even on the same texts, need
    # not give every token the same id (WordPiece breaks ties between equal counts in no fixed order).
    same = TextTokenizer(load_subword_tokenizer(folder / "tokenizer.json"), max_length=16)
    task = Classifier(same, 2, Encoder(CONFIG), pretrained=PretrainedSource("tabrasa", str(folder)))
    task.load_pretrained_weights()
    table = load_file(folder / "model.safetensors")["embedder.token_embed.weight"]
    assert torch.equal(task.embedder.token_embed.weight, table)


def test_a_vocabulary_of_the_same_size_trained_on_other_text_is_refused(tmp_path: Path) -> None:
    folder = _checkpoint(_tokenizer(FILMS), tmp_path / "ckpt")
    other = _tokenizer(PROTEINS)
    assert other.vocab_size == _tokenizer(FILMS).vocab_size, "the shapes alone cannot tell them apart"
    task = Classifier(other, 2, Encoder(CONFIG), pretrained=PretrainedSource("tabrasa", str(folder)))
    with pytest.raises(ValueError, match=r"tokens have other ids.*tokenizer_path"):
        task.load_pretrained_weights()
    backbone_only = PretrainedSource("tabrasa", str(folder), load_embedder=False)
    Classifier(other, 2, Encoder(CONFIG), pretrained=backbone_only).load_pretrained_weights()
