"""Tiny models of every modality, built directly (no training), and one tiny run trained by the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tabrasa.backbone import Encoder
from tabrasa.backbone.config import AttentionConfig, EncoderConfig
from tabrasa.deploy.run import TrainedRun
from tabrasa.tasks import Classifier
from tabrasa.tokenizers import AudioTokenizer, ImageTokenizer, ProteinTokenizer, TextTokenizer
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.text import train_subword_tokenizer

CORPUS = ["a good film", "a bad film", "the acting was good", "the plot was bad and slow"] * 5
CLASSES = ["neg", "pos"]


def text_tokenizer() -> TextTokenizer:
    return TextTokenizer(train_subword_tokenizer(CORPUS, vocab_size=60), max_length=32)


def tokenizer_for(modality: str) -> Tokenizer:
    if modality == "text":
        return text_tokenizer()
    if modality == "image":
        return ImageTokenizer(patch_size=4, channels=1, image_size=16)
    if modality == "audio":
        return AudioTokenizer(sample_rate=8000, n_mels=16, max_frames=64)
    return ProteinTokenizer(max_length=40)


def tiny_run(modality: str = "text", kind: str = "full", tmp: Path | None = None) -> TrainedRun:
    """A randomly initialised 2-layer, 32-wide classifier with perturbed biases (so a wrong graph shows)."""
    tokenizer = tokenizer_for(modality)
    attention = AttentionConfig(kind=kind, window=4, global_tokens=1, rank=8)  # type: ignore[arg-type]
    backbone = Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=80, attention=attention))
    model = Classifier(tokenizer, len(CLASSES), backbone)
    for name, param in model.named_parameters():
        if name.endswith("bias"):
            param.data.normal_(0.0, 0.1)
    place = tmp or Path("unused")
    return TrainedRun(model.eval(), tokenizer, CLASSES, place / "config.yaml", place / "model.ckpt")


TINY_ENCODER = {
    "class_path": "tabrasa.backbone.Encoder",
    "init_args": {"config": {"dim": 32, "depth": 1, "heads": 2, "max_len": 64}},
}


def fit_text_run(root: Path, name: str, backbone: dict, max_epochs: int) -> Path:
    """`tabrasa fit` on 40 labelled lines with `backbone`; the run folder it wrote."""
    from tabrasa.training.lightning_cli import build_cli

    data = root / "train.csv"
    rows = [("a good film, really good", "pos"), ("a bad film, really bad", "neg")] * 20
    data.write_text("text,label\n" + "".join(f'"{t}",{label}\n' for t, label in rows))
    config = {
        "seed_everything": 0,
        "trainer": {"max_epochs": max_epochs, "enable_progress_bar": False, "enable_model_summary": False,
                    "logger": {"class_path": "pytorch_lightning.loggers.CSVLogger",
                               "init_args": {"save_dir": str(root / "runs"), "name": name}}},
        "model": {"class_path": "tabrasa.tasks.Classifier", "init_args": {"backbone": backbone}},
        "data": {"class_path": "tabrasa.data.TextFileDataModule", "init_args": {
            "train_path": str(data),
            "tokenizer": {"class_path": "tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer",
                          "init_args": {"vocab_size": 60, "max_length": 32}},
            "cache_dir": str(root / "cache"), "loader": {"batch_size": 8}}},
        "test_after_fit": False,
    }  # fmt: skip
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    build_cli(["fit", "--config", str(path)])
    return root / "runs" / name / "version_0"


@pytest.fixture(scope="module")
def trained_text_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder written by `tabrasa fit`: 2 epochs of a 1-layer model on 40 labelled lines."""
    return fit_text_run(tmp_path_factory.mktemp("run"), "tiny", TINY_ENCODER, max_epochs=2)
