"""The one pass over a user's raw inputs: every unusable file or row listed before the first step, or
skipped and counted with skip_bad_inputs; short clips padded; a single class named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import PIL.Image
import pytest
import soundfile

from tabrasa.data import AudioFolderDataModule, ImageFolderDataModule, TextFileDataModule
from tabrasa.errors import UserError
from tabrasa.tokenizers import AudioTokenizer, ImageTokenizer
from tabrasa.tokenizers.learned_vocabulary import SubwordTokenizer


def image_folder(root: Path) -> Path:
    for name, value in (("cat", 30), ("dog", 220)):
        (root / name).mkdir(parents=True)
        for i in range(4):
            PIL.Image.fromarray(np.full((8, 8, 3), value + i, np.uint8)).save(root / name / f"{i}.png")
    (root / "cat" / "notes.png").write_text("not an image")
    (root / "dog" / "empty.png").write_bytes(b"")
    return root


def test_messy_image_folder_lists_every_bad_file_and_the_switch(tmp_path: Path) -> None:
    root = image_folder(tmp_path / "img")
    tokenizer = ImageTokenizer(patch_size=4, image_size=8)
    data = ImageFolderDataModule(str(root), tokenizer=tokenizer, val_size=2, test_size=2)
    with pytest.raises(UserError) as caught:
        data.setup()
    message = str(caught.value)
    assert "2 input(s) cannot be used" in message
    assert f"{root / 'cat' / 'notes.png'}: not an image" in message
    assert f"{root / 'dog' / 'empty.png'}: zero bytes" in message
    assert "--data.skip_bad_inputs true" in message
    skipping = ImageFolderDataModule(
        str(root), tokenizer=tokenizer, val_size=2, test_size=2, skip_bad_inputs=True
    )
    with pytest.warns(UserWarning, match="skipped 2 unusable input"):
        skipping.setup()
    assert sum(len(rows) for rows in skipping.splits.values()) == 8
    assert next(iter(skipping.test_dataloader()))["pixels"].shape == (2, 3, 8, 8)


def test_corrupt_clip_is_listed_and_a_10_ms_clip_is_padded(tmp_path: Path) -> None:
    root = tmp_path / "wav"
    for name, hz in (("low", 300), ("high", 3000)):
        (root / name).mkdir(parents=True)
        for i in range(3):
            wave = 0.3 * np.sin(2 * np.pi * hz * np.arange(4000) / 8000)
            soundfile.write(root / name / f"{i}.wav", wave.astype(np.float32), 8000)
    soundfile.write(root / "low" / "click.wav", np.full(80, 0.5, np.float32), 8000)  # 10 ms
    (root / "high" / "broken.wav").write_bytes(b"RIFF\x00\x01garbage that is no wave file")
    tokenizer = AudioTokenizer(n_mels=16, max_frames=100)
    with pytest.raises(UserError, match=r"broken\.wav: not audio soundfile can read") as caught:
        AudioFolderDataModule(str(root), tokenizer=tokenizer, val_size=1, test_size=1).setup()
    assert "1 input(s)" in str(caught.value) and "click.wav" not in str(caught.value)
    data = AudioFolderDataModule(
        str(root), tokenizer=tokenizer, val_size=1, test_size=1, skip_bad_inputs=True
    )
    with pytest.warns(UserWarning, match="skipped 1"):
        data.setup()
    click = next(r for split in data.splits.values() for r in split if r["audio"].endswith("click.wav"))
    features = tokenizer(data.raw_input(click, "test"))["features"]
    assert features.shape == (1 + 400 // 160, 16)  # resampled to 160 samples, padded to one 400-sample window


def write_csv(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in rows))
    return path


def test_unlabelled_rows_are_named_by_row_number(tmp_path: Path) -> None:
    rows = [(f"good {i}", "pos") if i % 2 else (f"bad {i}", "neg") for i in range(20)]
    rows[4] = ("no label here", "")
    rows[7] = ("", "pos")
    path = write_csv(tmp_path / "reviews.csv", rows)
    data = TextFileDataModule(
        str(path),
        tokenizer=SubwordTokenizer(vocab_size=50),
        val_size=2,
        test_size=2,
        cache_dir=str(tmp_path / "c"),
    )
    with pytest.raises(UserError) as caught:
        data.setup()
    assert f"{path} row 6: no label" in str(caught.value)  # the header is row 1
    assert f"{path} row 9: no text" in str(caught.value)
    skipping = TextFileDataModule(
        str(path), tokenizer=SubwordTokenizer(vocab_size=50), val_size=2, test_size=2, skip_bad_inputs=True,
        cache_dir=str(tmp_path / "c"),
    )  # fmt: skip
    with pytest.warns(UserWarning, match=r"skipped 2 unusable input\(s\) \(train: 2\)"):
        skipping.setup()
    assert sum(len(r) for r in skipping.splits.values()) == 18


def test_unknown_label_in_a_test_file_is_listed(tmp_path: Path) -> None:
    train = write_csv(tmp_path / "train.csv", [(f"text {i}", "ab"[i % 2]) for i in range(12)])
    test = write_csv(tmp_path / "test.csv", [("text x", "a"), ("text y", "zebra")])
    data = TextFileDataModule(
        str(train), test_path=str(test), tokenizer=SubwordTokenizer(vocab_size=50), val_size=2,
        cache_dir=str(tmp_path / "c"),
    )  # fmt: skip
    with pytest.raises(UserError, match=rf"{test} row 3: label 'zebra' is not among the training file's"):
        data.setup()


def test_a_single_class_csv_says_a_classifier_needs_two(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "one.csv", [(f"text {i}", "spam") for i in range(10)])
    data = TextFileDataModule(
        str(path), tokenizer=SubwordTokenizer(vocab_size=50), cache_dir=str(tmp_path / "c")
    )
    with pytest.raises(UserError, match=rf"at least 2 classes, found 1 \(spam\) in {path}"):
        data.setup()
