"""Unlabelled sources: inputs without labels, and no downstream test example in any pretraining set."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tabrasa.data.fashion_mnist import FILES, fashion_mnist_dir, read_idx
from tabrasa.data.imdb import imdb_splits
from tabrasa.data.keywords import KeywordsSettings
from tabrasa.data.keywords.speakers import speaker_table, split_speakers
from tabrasa.data.psortb import PSORTbDataModule
from tabrasa.data.unlabelled import InputsOf, UnlabelledFashionMNIST, UnlabelledMovieReviews
from tabrasa.data.unlabelled.fashion_mnist import image_hashes
from tabrasa.data.unlabelled.uniprot import psortb_sequences
from tabrasa.tokenizers.esm import EsmProteinTokenizer
from tabrasa.tokenizers.image import ImageTokenizer
from tabrasa.tokenizers.learned_vocabulary import SubwordTokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer


def pixels() -> ImageTokenizer:
    return ImageTokenizer(patch_size=7, channels=1, image_size=28, mean=0.286, std=0.353)


@pytest.mark.slow
def test_fashion_mnist_pretraining_images_exclude_every_test_image(tmp_path: Path) -> None:
    module = UnlabelledFashionMNIST(tokenizer=pixels(), download=False, cache_dir=str(tmp_path))
    images = module.inputs.tensor  # type: ignore[attr-defined]
    assert images.shape[1:] == (1, 28, 28) and 59_000 < len(images) <= 60_000
    test = read_idx(fashion_mnist_dir(None, download=False) / FILES["test"][0])
    assert not set(image_hashes(images[:, 0].numpy())) & set(image_hashes(test))
    small = UnlabelledFashionMNIST(tokenizer=pixels(), download=False, limit=64, val_size=8)
    batch = next(iter(small.train_dataloader()))
    assert set(batch) == {"pixels"} and batch["pixels"].shape == (32, 1, 28, 28)


@pytest.mark.slow
def test_movie_review_text_excludes_imdb_held_out_reviews(tmp_path: Path) -> None:
    module = UnlabelledMovieReviews(tokenizer=SubwordTokenizer(), cache_dir=str(tmp_path))
    texts = set(module.inputs.take(range(len(module.inputs))))
    imdb = imdb_splits(seed=0)  # what IMDBDataModule holds out with its default settings
    assert len(texts) > 25_000
    assert not texts & set(imdb["test"]["text"])
    assert not texts & set(imdb["validation"]["text"])


def test_movie_review_vocabulary_is_trained_on_the_served_texts(tmp_path: Path) -> None:
    module = UnlabelledMovieReviews(
        tokenizer=SubwordTokenizer(vocab_size=300, max_length=32), limit=50, cache_dir=str(tmp_path)
    )
    assert module.tokenizer.vocab_size == 300 and len(module.inputs) == 100  # 2 × limit texts
    assert len(list((tmp_path / "unlabelled" / "movie-text").glob("vocab-*.json"))) == 1
    batch = next(iter(module.train_dataloader()))
    assert batch["input_ids"].shape[1] <= 32 and "label" not in batch


@pytest.mark.slow
def test_psortb_sequences_are_all_banned_from_uniprot_pretraining() -> None:
    banned = psortb_sequences()
    psortb = PSORTbDataModule(tokenizer=ProteinTokenizer(unknown="x"), split="random")
    test = psortb.load_splits()["test"]["sequence"]
    assert len(banned) > 10_000 and set(test) <= banned


@pytest.mark.slow
def test_uniprot_pretraining_set_holds_no_psortb_test_protein(tmp_path: Path) -> None:
    from tabrasa.data.unlabelled import UnlabelledUniProt

    residues = EsmProteinTokenizer(max_length=256, truncation="head_tail", unknown="x")
    module = UnlabelledUniProt(tokenizer=residues, limit=2000, cache_dir=str(tmp_path))
    sequences = set(module.inputs.take(range(len(module.inputs))))
    assert sequences and not sequences & psortb_sequences()


@pytest.mark.slow
def test_inputs_of_serves_train_inputs_without_labels_and_never_the_test_split(tmp_path: Path) -> None:
    source = PSORTbDataModule(
        tokenizer=ProteinTokenizer(max_length=64, unknown="x"),
        limit=40,
        cache_dir=str(tmp_path),
        split="random",
    )
    module = InputsOf(source)
    module.setup("fit")
    batch = next(iter(module.train_dataloader()))
    assert "label" not in batch and batch["input_ids"].shape[0] == 32
    assert module.num_outputs == 0 and module.tokenizer is source.tokenizer
    with pytest.raises(ValueError, match="test"):
        module.test_dataloader()
    assert isinstance(batch["input_ids"], torch.Tensor)


@pytest.mark.parametrize("speakers", [600, 900, 1800])
def test_a_larger_speaker_table_for_audio_pretraining_never_uses_a_held_out_voice(speakers: int) -> None:
    """The larger synthesised-speech source is the keywords data module with more speakers, served
    without labels (`InputsOf`): speaker i depends only on (seed, i) and whole voices are split, so its
    training speakers are a superset of the labelled set's and never speak with a voice that the
    300-speaker keywords task validates or tests on."""
    s = KeywordsSettings()
    labelled = split_speakers(speaker_table(s.speakers, s.seed, s.flite_fraction), s.seed, s.val_fraction,
                              s.test_fraction)  # fmt: skip
    larger = split_speakers(speaker_table(speakers, s.seed, s.flite_fraction), s.seed, s.val_fraction,
                            s.test_fraction)  # fmt: skip
    held_out = {x.group for split in ("validation", "test") for x in labelled[split]}
    assert held_out and not held_out & {x.group for x in larger["train"]}
    assert set(labelled["train"]) < set(larger["train"])
    assert len(larger["train"]) >= 1.9 * len(labelled["train"]) * speakers / 600
