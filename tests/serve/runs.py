"""Tiny labelled data of every modality, and tiny runs trained on it by `tabrasa fit` (a few seconds each):
a single-task text run and a joint run of four tasks (text, image, audio, protein) on one backbone.

The classes are easy on purpose (bright vs dark images, low vs high tones, charged vs hydrophobic residues),
but the tests only need real run folders: a config.yaml and checkpoints `tabrasa fit` wrote.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import PIL.Image
import soundfile
import yaml

from tabrasa.training.lightning_cli import build_cli

RATE = 8000
TEXTS = [("a good film, really good", "pos"), ("a bad film, really bad", "neg")]
LOADER = {"batch_size": 8, "num_workers": 0}
BACKBONE = {"class_path": "tabrasa.backbone.Encoder",
            "init_args": {"config": {"dim": 32, "depth": 2, "heads": 2, "max_len": 80}}}  # fmt: skip
TRAINER = {"max_epochs": 2, "enable_progress_bar": False, "enable_model_summary": False, "accelerator": "cpu"}


def png_bytes(level: int, size: int = 16, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    pixels = np.clip(level + rng.integers(-30, 30, (size, size)), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    PIL.Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def wav_bytes(frequency: float = 300.0, seconds: float = 0.5, rate: int = RATE, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    t = np.arange(int(rate * seconds)) / rate
    wave = 0.3 * np.sin(2 * np.pi * frequency * t) + 0.01 * rng.standard_normal(len(t))
    buffer = io.BytesIO()
    soundfile.write(buffer, wave.astype(np.float32), rate, format="WAV")
    return buffer.getvalue()


def write_data(root: Path) -> dict[str, Path]:
    """12 examples per class of each modality under `root`."""
    rng = np.random.default_rng(0)
    text = root / "text.csv"
    text.write_text("text,label\n" + "".join(f'"{t}",{label}\n' for t, label in TEXTS * 12))
    for name, level in (("dark", 40), ("bright", 210)):
        (root / "images" / name).mkdir(parents=True, exist_ok=True)
        for i in range(12):
            (root / "images" / name / f"{i}.png").write_bytes(png_bytes(level, seed=i))
    for name, frequency in (("low", 300.0), ("high", 2500.0)):
        (root / "audio" / name).mkdir(parents=True, exist_ok=True)
        for i in range(12):
            (root / "audio" / name / f"{i}.wav").write_bytes(wav_bytes(frequency, seed=i))
    records = [
        f">{kind}{i} {label}\n{''.join(rng.choice(list(letters), 20))}\n"
        for i in range(12)
        for kind, label, letters in (("p", "cytoplasm", "KRDE"), ("q", "membrane", "LIVF"))
    ]
    fasta = root / "proteins.fasta"
    fasta.write_text("".join(records))
    return {"text": text, "images": root / "images", "audio": root / "audio", "fasta": fasta}


def data_modules(files: dict[str, Path], cache: Path) -> dict[str, dict[str, Any]]:
    common = {"cache_dir": str(cache), "loader": LOADER}
    return {
        "text": {"class_path": "tabrasa.data.TextFileDataModule", "init_args": {
            "train_path": str(files["text"]), **common,
            "tokenizer": {"class_path": "tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer",
                          "init_args": {"vocab_size": 60, "max_length": 16}}}},
        "image": {"class_path": "tabrasa.data.ImageFolderDataModule", "init_args": {
            "root": str(files["images"]), **common,
            "tokenizer": {"class_path": "tabrasa.tokenizers.ImageTokenizer",
                          "init_args": {"patch_size": 4, "channels": 1, "image_size": 16}}}},
        "audio": {"class_path": "tabrasa.data.AudioFolderDataModule", "init_args": {
            "root": str(files["audio"]), **common,
            "tokenizer": {"class_path": "tabrasa.tokenizers.AudioTokenizer",
                          "init_args": {"sample_rate": RATE, "n_mels": 16, "max_frames": 64}}}},
        "protein": {"class_path": "tabrasa.data.FastaDataModule", "init_args": {
            "path": str(files["fasta"]), **common,
            "tokenizer": {"class_path": "tabrasa.tokenizers.ProteinTokenizer",
                          "init_args": {"max_length": 24}}}},
    }  # fmt: skip


def fit(root: Path, name: str, model: dict[str, Any], data: dict[str, Any]) -> Path:
    """Train with `tabrasa fit` (in this process) and return the run folder it wrote."""
    logger = {"class_path": "pytorch_lightning.loggers.CSVLogger",
              "init_args": {"save_dir": str(root / "runs"), "name": name}}  # fmt: skip
    config = {"seed_everything": 0, "trainer": {**TRAINER, "logger": logger}, "model": model, "data": data,
              "test_after_fit": False}  # fmt: skip
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    build_cli(["fit", "--config", str(path)])
    return root / "runs" / name / "version_0"


def train_runs(root: Path) -> dict[str, Path]:
    """{"text": a Classifier run, "joint": a JointTask run over text, image, audio and protein}."""
    modules = data_modules(write_data(root), root / "cache")
    text = fit(root, "text", {"class_path": "tabrasa.tasks.Classifier", "init_args": {"backbone": BACKBONE}},
               modules["text"])  # fmt: skip
    joint = fit(root, "joint", {"class_path": "tabrasa.tasks.JointTask", "init_args": {"backbone": BACKBONE}},
                {"class_path": "tabrasa.data.JointDataModule", "init_args": {"tasks": modules}})  # fmt: skip
    return {"text": text, "joint": joint}
