"""Prediction on raw inputs: one row per input with its id, class and probabilities; bad inputs listed."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import PIL.Image
import pytest
import soundfile

import tabrasa
from tabrasa.cli.main import main
from tabrasa.deploy.predictor import Predictor
from tabrasa.deploy.readers import read_inputs
from tabrasa.errors import UserError
from tests.deploy.conftest import tiny_run


def test_rows_carry_id_class_and_probabilities_that_sum_to_one(tmp_path: Path) -> None:
    predictor = Predictor(tiny_run("text", tmp=tmp_path))
    rows = predictor.predict(["a good film", "a bad film", "the plot"], ids=["x", "y", "z"], batch_size=2)
    assert [r["id"] for r in rows] == ["x", "y", "z"]
    for row in rows:
        probs = [row["prob_neg"], row["prob_pos"]]
        assert sum(probs) == pytest.approx(1.0, abs=1e-5)
        assert row["prediction"] == ["neg", "pos"][int(np.argmax(probs))] and row["error"] == ""


def test_batching_does_not_change_predictions(tmp_path: Path) -> None:
    predictor = Predictor(tiny_run("text", tmp=tmp_path))
    texts = ["a good film", "the acting was good and the plot was bad", "bad"]
    one = predictor.predict(texts, batch_size=1)
    three = predictor.predict(texts, batch_size=3)
    for a, b in zip(one, three, strict=True):
        assert a["prob_pos"] == pytest.approx(b["prob_pos"], abs=1e-5)


def test_an_unreadable_input_is_listed_and_the_rest_predicted(tmp_path: Path) -> None:
    predictor = Predictor(tiny_run("protein", tmp=tmp_path))
    rows = predictor.predict(["MKTAYIAK", "MK1Z", "MSTNPK"], batch_size=8)
    assert [bool(r["error"]) for r in rows] == [False, True, False]
    assert "residue 3" in rows[1]["error"] and rows[1]["prediction"] == ""
    assert rows[0]["prediction"] in ("neg", "pos")


def test_text_file_csv_and_jsonl_readers_give_line_and_row_ids(tmp_path: Path) -> None:
    lines = tmp_path / "reviews.txt"
    lines.write_text("first review\n\nthird line\n")
    assert [(i.id, i.value) for i in read_inputs(lines, "text")] == [
        (f"{lines}:1", "first review"),
        (f"{lines}:3", "third line"),
    ]
    table = tmp_path / "reviews.csv"
    table.write_text("review,score\ngood one,1\n,0\n")
    items = read_inputs(table, "text", column="review")
    assert items[0].value == "good one" and items[1].error == "column 'review' is empty"
    jsonl = tmp_path / "reviews.jsonl"
    jsonl.write_text('{"text": "fine"}\nnot json\n')
    items = read_inputs(jsonl, "text")
    assert items[0].value == "fine" and "not valid JSON" in (items[1].error or "")


def test_fasta_ids_are_the_header_words(tmp_path: Path) -> None:
    fasta = tmp_path / "seqs.fasta"
    fasta.write_text(">P1 some protein\nMKTA\nYIAK\n>P2\nMSTN\n")
    assert [(i.id, i.value) for i in read_inputs(fasta, "protein")] == [("P1", "MKTAYIAK"), ("P2", "MSTN")]


def test_image_folder_with_a_corrupt_file(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    for name in ("a.png", "b.png"):
        PIL.Image.fromarray(np.zeros((20, 20), dtype=np.uint8)).save(folder / name)
    (folder / "broken.png").write_bytes(b"not an image")
    predictor = Predictor(tiny_run("image", tmp=tmp_path))
    rows = predictor.predict_files(folder, progress=False)
    assert [Path(r["id"]).name for r in rows] == ["a.png", "b.png", "broken.png"]
    assert [bool(r["error"]) for r in rows] == [False, False, True]
    assert "cannot decode image" in rows[2]["error"]


def test_audio_folder_is_read_with_soundfile(tmp_path: Path) -> None:
    folder = tmp_path / "clips"
    folder.mkdir()
    soundfile.write(folder / "one.wav", np.random.default_rng(0).standard_normal(4000) * 0.1, 8000)
    soundfile.write(folder / "two.flac", np.random.default_rng(1).standard_normal((6000, 2)) * 0.1, 16000)
    rows = Predictor(tiny_run("audio", tmp=tmp_path)).predict_files(folder, progress=False)
    assert len(rows) == 2 and all(r["error"] == "" for r in rows)


def test_wrong_modality_and_empty_inputs_are_user_errors(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    PIL.Image.fromarray(np.zeros((8, 8), dtype=np.uint8)).save(folder / "a.png")
    with pytest.raises(UserError, match="holds image files, but this run is a text model"):
        read_inputs(folder, "text")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(UserError, match="is empty"):
        read_inputs(empty, "text")
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    with pytest.raises(UserError, match="is empty"):
        read_inputs(nothing, "text")


def test_a_checkpoint_without_its_config_is_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "model.ckpt"
    ckpt.write_bytes(b"x")
    with pytest.raises(UserError, match=r"no config\.yaml"):
        tabrasa.load(str(ckpt))


@pytest.mark.slow
def test_load_a_trained_run_and_predict_files_from_the_command_line(
    trained_text_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictor = tabrasa.load(str(trained_text_run))
    rows = predictor.predict(["a good film, really good", "a bad film, really bad"])
    assert [r["prediction"] for r in rows] == ["pos", "neg"]  # the class names, learned from 40 lines
    texts = tmp_path / "in.txt"
    texts.write_text("a good film, really good\na bad film, really bad\n")
    out = tmp_path / "preds.csv"
    done = subprocess.run(
        [sys.executable, "-m", "tabrasa.cli", "predict-files", "--run", str(trained_text_run),
         "--input", str(texts), "--out", str(out), "--no_progress"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with out.open() as handle:
        written = list(csv.DictReader(handle))
    assert list(written[0]) == ["id", "prediction", "prob_neg", "prob_pos", "error"]
    assert [r["prediction"] for r in written] == ["pos", "neg"]
    assert float(written[0]["prob_pos"]) == pytest.approx(rows[0]["prob_pos"], abs=1e-5)
    images = tmp_path / "imgs"
    images.mkdir()
    PIL.Image.fromarray(np.zeros((8, 8), dtype=np.uint8)).save(images / "a.png")
    # The wrong modality and the export run `main` in this process: the entry point was started as a process
    # above, and each further start would cost a Lightning import (11-13 s on a loaded core).
    wrong = main(["predict-files", "--run", str(trained_text_run), "--input", str(images),
                  "--out", str(tmp_path / "p.jsonl")])  # fmt: skip
    assert wrong == 2 and "this run is a text model" in capsys.readouterr().err
    assert (
        main(["export", "--run", str(trained_text_run), "--format", "onnx", "--out", str(tmp_path / "onnx")])
        == 0
    )
    assert json.loads((tmp_path / "onnx" / "tabrasa_export.json").read_text())["class_names"] == [
        "neg",
        "pos",
    ]
