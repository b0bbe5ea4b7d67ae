"""The shared data-module machinery: stratified training fractions, the IMDB splits, and the tokenizer a
data module is handed (never picked): refused when missing, with the config lines that fix it."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pytest
import yaml

import tabrasa.tokenizers.learned_vocabulary as learned_vocabulary
from tabrasa.cli import main
from tabrasa.data import (
    AudioFolderDataModule,
    FashionMNISTDataModule,
    FastaDataModule,
    HubAudioDataModule,
    HubImageDataModule,
    HubProteinDataModule,
    HubTextDataModule,
    ImageFolderDataModule,
    IMDBDataModule,
    KeywordsDataModule,
    PSORTbDataModule,
    TextFileDataModule,
    UniProtLocalisationDataModule,
)
from tabrasa.data.base_module import BaseDataModule
from tabrasa.data.datamodule import stratified_fraction
from tabrasa.data.loader import LoaderConfig
from tabrasa.data.unlabelled import UnlabelledFashionMNIST, UnlabelledMovieReviews, UnlabelledUniProt
from tabrasa.errors import UserError
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.learned_vocabulary import SubwordTokenizer

ROOT = Path(__file__).resolve().parents[2]
# Every shipped data module that is handed a tokenizer, with the arguments it cannot do without.
MODULES: list[tuple[type[BaseDataModule], dict[str, Any]]] = [
    (IMDBDataModule, {}),
    (TextFileDataModule, {"train_path": "reviews.csv"}),
    (HubTextDataModule, {"dataset_id": "stanfordnlp/imdb"}),
    (FashionMNISTDataModule, {}),
    (ImageFolderDataModule, {"root": "photos"}),
    (HubImageDataModule, {"dataset_id": "zalando-datasets/fashion_mnist"}),
    (AudioFolderDataModule, {"root": "clips"}),
    (HubAudioDataModule, {"dataset_id": "google/speech_commands"}),
    (KeywordsDataModule, {}),
    (PSORTbDataModule, {}),
    (UniProtLocalisationDataModule, {}),
    (FastaDataModule, {"path": "proteins.fasta"}),
    (HubProteinDataModule, {"dataset_id": "proteins/localisation"}),
    (UnlabelledFashionMNIST, {}),
    (UnlabelledMovieReviews, {}),
    (UnlabelledUniProt, {}),
]
IDS = [module.__name__ for module, _ in MODULES]


def test_stratified_fraction_keeps_class_balance_and_is_seeded() -> None:
    rows = datasets.Dataset.from_dict({"label": [0] * 90 + [1] * 10, "x": list(range(100))})
    part = stratified_fraction(rows, 0.1, seed=3)
    assert sorted(np.bincount(part["label"]).tolist()) == [1, 9]
    assert part["x"] == stratified_fraction(rows, 0.1, seed=3)["x"]
    assert part["x"] != stratified_fraction(rows, 0.1, seed=4)["x"]
    assert len(stratified_fraction(rows, 0.001, seed=0)) == 2  # at least one per class


def test_imdb_splits_are_limited_and_fractioned(cache_dir: Path) -> None:
    dm = IMDBDataModule(
        tokenizer=SubwordTokenizer(vocab_size=500, max_length=64), limit=200, train_fraction=0.5
    )
    dm.setup()
    assert len(dm.splits["train"]) == 100 and len(dm.splits["validation"]) == 200
    assert dm.num_outputs == 2 and dm.tokenizer.vocab_size <= 500
    batch = next(iter(dm.train_dataloader()))
    assert batch["input_ids"].shape[1] <= 64 and batch["label"].dtype.is_floating_point is False


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="train_fraction=0"):
        IMDBDataModule(tokenizer=ByteTokenizer(), train_fraction=0.0)
    with pytest.raises(ValueError, match="batch_size=0"):
        LoaderConfig(batch_size=0)
    with pytest.raises(ValueError, match="limit=0"):
        IMDBDataModule(tokenizer=ByteTokenizer(), limit=0)


def hinted_tokenizer(module: type[BaseDataModule]) -> Tokenizer:
    """The tokenizer the missing-tokenizer error tells the user to add, built from its own config text."""
    hint = yaml.safe_load(module.tokenizer_hint)
    path, _, name = hint["class_path"].rpartition(".")
    return getattr(importlib.import_module(path), name)(**hint.get("init_args", {}))


@pytest.mark.parametrize(("module", "required"), MODULES, ids=IDS)
def test_a_data_module_without_a_tokenizer_stops_naming_the_lines_to_add(
    module: type[BaseDataModule], required: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    for hook in ("load_splits", "load_inputs"):  # any data read at construction would be recorded
        monkeypatch.setattr(module, hook, lambda self, hook=hook: read.append(hook), raising=False)
    with pytest.raises(UserError) as refused:
        module(**required)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{module.__name__} was given no tokenizer")
    assert f"`data.init_args.tokenizer: {module.tokenizer_hint}`" in message
    assert not read, "the error comes before any data is read"
    # Counter-check: the lines the error names are a real fix; with them the same call builds the module,
    # still without reading any data.
    built = module(tokenizer=hinted_tokenizer(module), **required)
    assert isinstance(built, BaseDataModule) and not read


def test_every_hint_names_its_own_modality() -> None:
    """The hints are not one generic line: each modality's module suggests a tokenizer of its kind."""
    hints = {module.__name__: module.tokenizer_hint for module, _ in MODULES}
    assert (
        "SubwordTokenizer" in hints["IMDBDataModule"] and "ImageTokenizer" in hints["FashionMNISTDataModule"]
    )
    assert "MeasuredAudioTokenizer" in hints["KeywordsDataModule"]
    assert (
        "AudioTokenizer" in hints["AudioFolderDataModule"] and "ProteinTokenizer" in hints["FastaDataModule"]
    )
    assert "<Modality>" in BaseDataModule.tokenizer_hint and "<Modality>" not in "".join(hints.values())


def test_the_command_line_prints_the_missing_tokenizer_as_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = [
        "fit",
        "--config",
        str(ROOT / "configs" / "text" / "imdb.yaml"),
        "--data.init_args.tokenizer",
        "null",
    ]
    assert main([*args, "--trainer.default_root_dir", str(tmp_path), "--trainer.logger", "false"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("tabrasa: error:")]
    assert len(errors) == 1 and "IMDBDataModule was given no tokenizer" in errors[0]
    assert (
        "data.init_args.tokenizer: {class_path: tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer"
        in errors[0]
    )


def test_the_learned_vocabulary_keeps_its_cache_key_and_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vocabulary is trained once per data and settings, under the key it had while the data module
    trained it (vocab-826a3ac4188b.json for these settings), so earlier runs' vocabularies are read, not
    retrained: the trainer is not deterministic across processes, so the cache is what keeps ids stable."""

    def words(**settings: Any) -> SubwordTokenizer:
        return SubwordTokenizer(max_length=32, **settings)

    cache = str(tmp_path)
    first = IMDBDataModule(tokenizer=words(vocab_size=321), limit=40, cache_dir=cache)
    vocabulary = first.tokenizer.hf.get_vocab()
    assert sorted(p.name for p in first.cache_path.iterdir()) == ["vocab-826a3ac4188b.json"]

    def no_training(*args: Any) -> None:
        raise AssertionError("a cached vocabulary was trained again")

    monkeypatch.setattr(learned_vocabulary, "train_subword_tokenizer", no_training)
    again = IMDBDataModule(tokenizer=words(vocab_size=321), limit=40, cache_dir=cache)
    assert again.tokenizer.hf.get_vocab() == vocabulary
    text = "A truly wonderful film, though the ending dragged."
    assert again.tokenizer.encode_ids(text) == first.tokenizer.encode_ids(text)
    # Counter-check: other settings are another entry (the old key for these too), so they do train.
    other = IMDBDataModule(
        tokenizer=words(vocab_size=300, subword="bpe", lowercase=False), limit=40, cache_dir=cache
    )
    with pytest.raises(AssertionError, match="trained again"):
        other.tokenizer  # noqa: B018
    _, cache_file = other.fitting_data(other._tokenizer.learned_settings())  # type: ignore[attr-defined]
    assert cache_file.name == "vocab-a1ea6785cefa.json"


def test_an_older_runs_saved_config_is_refused_with_the_tokenizer_lines_that_replace_it(
    tmp_path: Path,
) -> None:
    """A run saved before tokenizers owned their settings holds them on the data module (fully resolved,
    as `tabrasa fit` saves it): rebuilding it stops with the lines to use instead, which build the same
    tokenizer, and so find the vocabulary that run trained (the cache key is unchanged)."""
    from tabrasa.training.rebuild import rebuild_run

    old = {"tokenizer": None, "max_length": 128, "truncation": "head_tail", "vocab_size": 8000,
           "subword": "wordpiece", "lowercase": True, "tokenizer_path": None, "limit": 40}  # fmt: skip
    config = tmp_path / "config.yaml"
    joint = {
        "class_path": "tabrasa.data.JointDataModule",
        "init_args": {"tasks": {"imdb": {"class_path": "tabrasa.data.IMDBDataModule", "init_args": old}}},
    }
    config.write_text(yaml.safe_dump({"data": joint}))  # fmt: skip
    with pytest.raises(UserError) as refused:
        rebuild_run(config)
    message = str(refused.value)
    assert message.startswith(
        f"{config} (task 'imdb'): IMDBDataModule is given vocab_size, subword, lowercase"
    )
    fix = yaml.safe_load(message.split("`data.init_args.tokenizer: ")[1].rstrip("`"))
    tokenizer = SubwordTokenizer(**fix["init_args"])
    assert fix["class_path"] == "tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer"
    assert (tokenizer.max_length, tokenizer.truncation) == (128, "head_tail")
    assert tokenizer.learned_settings() == {"vocab": 8000, "kind": "wordpiece", "lower": True}
    # Counter-checks: a current data section passes; an old one whose tokenizer was given is told to delete
    # the leftover defaults.
    IMDBDataModule.retired_settings({"tokenizer": {"class_path": "x"}, "limit": 40}, "new.yaml")
    with pytest.raises(UserError, match="delete them: its tokenizer is given"):
        IMDBDataModule.retired_settings({**old, "tokenizer": {"class_path": "x"}}, "bytes.yaml")
