"""The user's own data: image and audio folders, CSV/JSONL text, FASTA (header or side-CSV labels), a
hub-style dataset folder, and the documented `--data configs/user/…` way to train any config on them."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import PIL.Image
import pytest
import soundfile

from tabrasa.cli import main
from tabrasa.data import (
    AudioFolderDataModule,
    FastaDataModule,
    HubTextDataModule,
    ImageFolderDataModule,
    TextFileDataModule,
)
from tabrasa.data.loader import LoaderConfig
from tabrasa.data.user_data import require_columns
from tabrasa.errors import UserError
from tabrasa.tokenizers import AudioTokenizer, ImageTokenizer, ProteinTokenizer
from tabrasa.tokenizers.learned_vocabulary import SubwordTokenizer

ROOT = Path(__file__).resolve().parents[2]


def images() -> ImageTokenizer:
    return ImageTokenizer(patch_size=4, channels=3, image_size=16)


def proteins() -> ProteinTokenizer:
    return ProteinTokenizer(max_length=512, truncation="head_tail", unknown="x")


def make_image_folder(root: Path, per_class: int = 6, splits: bool = False) -> Path:
    rng = np.random.default_rng(0)
    for split in ("train", "test") if splits else ("",):
        for name, colour in (("red", (220, 20, 20)), ("blue", (20, 20, 220))):
            folder = root / split / name
            folder.mkdir(parents=True)
            for i in range(per_class):
                pixels = np.clip(np.array(colour) + rng.normal(0, 10, (12 + i, 16, 3)), 0, 255).astype(
                    np.uint8
                )
                PIL.Image.fromarray(pixels).save(folder / f"{i}.png")
            PIL.Image.fromarray(pixels[..., 0]).save(folder / "grey.png")  # a greyscale file among RGB
    return root


def make_audio_folder(root: Path) -> Path:
    for name, hz in (("low", 300), ("high", 3000)):
        (root / name).mkdir(parents=True)
        for i in range(5):
            t = np.arange(4000 + 200 * i) / 8000
            wave = 0.3 * np.sin(2 * np.pi * hz * t)
            soundfile.write(root / name / f"{i}.wav", np.stack([wave, wave], 1).astype(np.float32), 8000)
    return root


def make_fasta(path: Path, n: int = 30) -> Path:
    rng = np.random.default_rng(0)
    sequences = ["".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWY"), 20 + i)) for i in range(n)]
    lines = []
    for i, sequence in enumerate(sequences):
        label = "nucleus" if i % 2 else "cytoplasm"
        lines += [f">P{i:03d} {label} [{label.upper()}] a protein", sequence[:10], sequence[10:]]
    path.write_text("\n".join([*lines, ">P999 nucleus [NUCLEUS] copy of P001", sequences[1]]) + "\n")
    return path


def test_image_folder_holds_out_splits_and_converts_modes(tmp_path: Path) -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=3, image_size=16)
    data = ImageFolderDataModule(
        str(make_image_folder(tmp_path / "img")),
        tokenizer=tokenizer,
        val_size=2,
        test_size=2,
        loader=LoaderConfig(batch_size=4),
    )
    assert list(data.class_names) == ["blue", "red"] and data.num_outputs == 2
    assert {k: len(v) for k, v in data.splits.items()} == {"train": 10, "validation": 2, "test": 2}
    batch = next(iter(data.train_dataloader()))
    assert batch["pixels"].shape == (4, 3, 16, 16)
    grey = next(r for r in data.splits["train"] if r["image"].endswith("grey.png"))
    assert data.tokenizer(data.raw_input(grey, "test"))["pixels"].shape == (3, 16, 16)


def test_image_folder_uses_given_split_folders(tmp_path: Path) -> None:
    data = ImageFolderDataModule(
        str(make_image_folder(tmp_path / "img", splits=True)), tokenizer=images(), val_size=2
    )
    assert {k: len(v) for k, v in data.splits.items()} == {"train": 12, "validation": 2, "test": 14}


def test_image_folder_errors_name_the_layout(tmp_path: Path) -> None:
    (tmp_path / "empty" / "cats").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"<class>/<file>"):
        ImageFolderDataModule(str(tmp_path / "empty"), tokenizer=images()).load_splits()
    with pytest.raises(UserError, match=r"data\.root"):
        ImageFolderDataModule(str(tmp_path / "missing"), tokenizer=images()).load_splits()


def test_audio_folder_reads_with_soundfile_and_resamples(tmp_path: Path) -> None:
    tokenizer = AudioTokenizer(sample_rate=16000, n_mels=32, max_frames=100)
    data = AudioFolderDataModule(
        str(make_audio_folder(tmp_path / "wav")),
        tokenizer=tokenizer,
        val_size=2,
        test_size=2,
        loader=LoaderConfig(batch_size=3),
    )
    batch = next(iter(data.test_dataloader()))
    assert batch["features"].shape[0] == 2 and batch["features"].shape[2] == 32
    # 8 kHz files resampled to 16 kHz: 1 + 2n // 160 frames of 10 ms for n samples
    expected = sorted(1 + 2 * soundfile.info(r["audio"]).frames // 160 for r in data.splits["test"])
    assert sorted(batch["frame_mask"].sum(1).tolist()) == expected
    high = data.splits["train"].features["label"].str2int("high")
    row = next(r for r in data.splits["train"] if r["label"] == high)
    features = data.tokenizer(data.raw_input(row, "test"))["features"]
    assert features[:, 16:].mean() > features[:, :8].mean()  # 3 kHz tone: energy in the upper mel bins


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_text_file_columns_labels_and_splits(tmp_path: Path, suffix: str) -> None:
    rows = [
        {"review": ("fine good " if i % 3 else "poor bad ") * 3, "stars": 10 if i % 3 else 2}
        for i in range(30)
    ]
    path = tmp_path / f"reviews{suffix}"
    if suffix == ".csv":
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, ["review", "stars"])
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = TextFileDataModule(str(path), text_column="review", label_column="stars",
                              tokenizer=SubwordTokenizer(vocab_size=100), val_size=3, test_size=6,
                              cache_dir=str(tmp_path / "cache"))  # fmt: skip
    assert list(data.class_names) == ["2", "10"]  # numbers in numeric order
    assert {k: len(v) for k, v in data.splits.items()} == {"train": 21, "validation": 3, "test": 6}
    assert sorted(data.splits["test"]["label"]) == [0, 0, 1, 1, 1, 1]
    lacks = r"has no columns 'body' and 'label' \(its columns: 'review', 'stars'\)"
    with pytest.raises(UserError, match=rf"data file {re.escape(str(path))} {lacks}"):
        TextFileDataModule(
            str(path), text_column="body", tokenizer=SubwordTokenizer(), cache_dir=str(tmp_path / "c2")
        ).load_splits()


def test_fasta_labels_from_header_pattern_or_side_csv(tmp_path: Path) -> None:
    fasta = make_fasta(tmp_path / "p.fasta")
    data = FastaDataModule(
        str(fasta), tokenizer=proteins(), val_size=4, test_size=4, cache_dir=str(tmp_path / "a")
    )
    assert list(data.class_names) == ["cytoplasm", "nucleus"]
    assert sum(len(s) for s in data.splits.values()) == 30  # the copy of P001 is merged
    bracket = FastaDataModule(
        str(fasta), tokenizer=proteins(), label_pattern=r"\[([^\]]+)\]", val_size=4, test_size=4,
        cache_dir=str(tmp_path / "b"),
    )  # fmt: skip
    assert list(bracket.class_names) == ["CYTOPLASM", "NUCLEUS"]
    side = tmp_path / "labels.csv"
    side.write_text(
        "id,label\n"
        + "".join(f"P{i:03d},{'big' if i >= 15 else 'small'}\n" for i in range(30))
        + "P999,small\n"
    )
    by_csv = FastaDataModule(
        str(fasta), tokenizer=proteins(), labels_csv=str(side), val_size=4, test_size=4,
        cache_dir=str(tmp_path / "c"),
    )  # fmt: skip
    assert list(by_csv.class_names) == ["big", "small"]
    with pytest.raises(ValueError, match="label_pattern"):
        FastaDataModule(
            str(fasta), tokenizer=proteins(), label_pattern=r"species=(\w+)", cache_dir=str(tmp_path / "d")
        ).load_splits()


def test_hub_dataset_from_a_local_folder(tmp_path: Path) -> None:
    folder = tmp_path / "hub"
    folder.mkdir()
    for split, n in (("train", 24), ("test", 6)):
        (folder / f"{split}.csv").write_text(
            "text,label\n" + "".join(f"{'yes' if i % 2 else 'no'} {i},{i % 2}\n" for i in range(n))
        )
    data = HubTextDataModule(
        str(folder), val_size=4, tokenizer=SubwordTokenizer(vocab_size=60), cache_dir=str(tmp_path / "cache")
    )
    assert {k: len(v) for k, v in data.splits.items()} == {"train": 20, "validation": 4, "test": 6}
    assert data.num_outputs == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "data_file", "make", "key"),
    [
        ("image/fashion_mnist.yaml", "image_folder.yaml", lambda p: make_image_folder(p / "x"), "root"),
        ("image/fashion_mnist.yaml", "audio_folder.yaml", lambda p: make_audio_folder(p / "x"), "root"),
        ("protein/psortb.yaml", "fasta.yaml", lambda p: make_fasta(p / "x.fasta"), "path"),
    ],
)
def test_any_config_trains_on_user_data(
    config: str, data_file: str, make, key: str, tmp_path: Path, cache_dir: Path
) -> None:
    source = make(tmp_path)
    configs = ROOT / "configs"
    args = [
        "fit", "--config", str(configs / config), "--data", str(configs / "user" / data_file),
        f"--data.{key}", str(source), "--data.loader.num_workers", "0",
        "--data.val_size", "2", "--data.test_size", "2",
        "--trainer.fast_dev_run", "true", "--trainer.enable_progress_bar", "false",
        "--trainer.default_root_dir", str(tmp_path),
    ]  # fmt: skip
    assert main(args) == 0


def user_cli(config: str, data: str, source: Path, tmp_path: Path, *extra: str) -> list[str]:
    """`tabrasa fit` of a shipped config on user data, everything it writes under tmp_path."""
    key = "path" if data == "fasta.yaml" else "train_path"
    return [
        "fit", "--config", str(ROOT / "configs" / config), "--data", str(ROOT / "configs" / "user" / data),
        f"--data.{key}", str(source), "--data.cache_dir", str(tmp_path / "cache"),
        "--data.val_size", "2", "--data.test_size", "2",
        "--trainer.fast_dev_run", "true", "--trainer.default_root_dir", str(tmp_path / "runs"), *extra,
    ]  # fmt: skip


def one_line_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command; it must end with status 2 and one error line, no traceback. Returns that line."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("tabrasa: error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_csv_without_the_named_column_is_one_line_naming_file_column_and_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bug: a CSV without the text column ended in a raw KeyError and its traceback."""
    path = tmp_path / "reviews.csv"
    path.write_text("review,label\n" + "".join(f"film {i},{i % 2}\n" for i in range(20)))
    line = one_line_error(user_cli("text/imdb.yaml", "text_csv.yaml", path, tmp_path), capsys)
    assert str(path) in line and "no column 'text'" in line  # the file, the missing column
    assert "(its columns: 'review', 'label')" in line and "--data.text_column" in line  # what is, the fix


def test_the_column_check_names_only_what_is_missing() -> None:
    """Counter-test: the error lists the missing columns alone, and nothing is raised when all are there."""
    with pytest.raises(
        UserError, match=r"has no column 'id' \(its columns: 'label', 'x'\); set --data\.id_column"
    ):
        require_columns("labels file a.csv", ["label", "x"], {"id": "id_column", "label": "label_column"})
    require_columns("labels file a.csv", ["id", "label"], {"id": "id_column", "label": "label_column"})


def write_fasta_case(tmp_path: Path, case: str) -> tuple[Path, list[str]]:
    fasta = make_fasta(tmp_path / "p.fasta")
    if case == "side csv without the id column":
        side = tmp_path / "side.csv"
        side.write_text("accession,label\n" + "".join(f"P{i:03d},x{i % 2}\n" for i in range(30)))
        return fasta, ["--data.labels_csv", str(side)]
    if case == "missing side csv":
        return fasta, ["--data.labels_csv", str(tmp_path / "absent.csv")]
    if case == "not FASTA":
        (tmp_path / "p.fasta").write_text("MKV\n>P1 a\nMK\n")
        return fasta, []
    return fasta, ["--data.label_pattern", r"^\S+"]  # no (group) around the label


# A text file's mistakes: (its contents, what the one error line says).
TEXT_MISTAKES = {
    "empty file": ("", "holds nothing"),
    "header only": ("text,label\n", "holds a header but no rows"),
    "broken JSON Lines": ('{"text": "a", "label": 1}\n{broken\n', "cannot be read as JSONL"),
    "too large a hold-out": ("text,label\n" + "".join(f"t {i},{i % 2}\n" for i in range(6)), "lower data"),
}
FASTA_MISTAKES = {
    "side csv without the id column": "has no column 'id' (its columns: 'accession', 'label')",
    "missing side csv": "absent.csv does not exist",
    "not FASTA": "sequence before the first '>' header",
    "pattern without a group": "needs a (group) around the label",
}


@pytest.mark.parametrize("case", TEXT_MISTAKES)
def test_every_text_file_mistake_is_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content, expected = TEXT_MISTAKES[case]
    path = tmp_path / ("data.jsonl" if "JSON" in case else "data.csv")
    path.write_text(content)
    extra = ["--data.val_size", "5"] if "hold-out" in case else []
    args = user_cli("text/imdb.yaml", "text_csv.yaml", path, tmp_path, *extra)
    assert expected in one_line_error(args, capsys)


@pytest.mark.parametrize("case", FASTA_MISTAKES)
def test_every_fasta_mistake_is_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fasta, extra = write_fasta_case(tmp_path, case)
    args = user_cli("protein/psortb.yaml", "fasta.yaml", fasta, tmp_path, *extra)
    assert FASTA_MISTAKES[case] in one_line_error(args, capsys)
