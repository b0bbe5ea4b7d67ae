"""Reading a request body: one input per request, decoded for the modality, refused with a status and one
line when the model cannot use it, with what the tokenizer cut reported as a warning."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from starlette.datastructures import FormData, UploadFile

from tabrasa.deploy.run import TrainedRun
from tabrasa.serve.model import ServedModel
from tabrasa.serve.refusals import BadInputError
from tabrasa.serve.requests import decode
from tabrasa.tokenizers import ProteinTokenizer
from tests.deploy.conftest import tiny_run
from tests.serve.conftest import served
from tests.serve.runs import png_bytes, wav_bytes


@pytest.fixture(scope="module")
def everything() -> ServedModel:
    return served("text", "image", "audio", "protein")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def refused(payload: Any, model: ServedModel) -> tuple[int, str]:
    with pytest.raises(BadInputError) as caught:
        decode(payload, model)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message, message
    return caught.value.status, message


def upload(name: str, data: bytes) -> UploadFile:
    return UploadFile(file=io.BytesIO(data), filename=name)


def test_each_modality_is_routed_to_its_task_and_decoded(everything: ServedModel) -> None:
    text = decode({"text": "a good film", "id": 7, "attention": True}, everything)
    assert (text.task.name, text.raw, text.id, text.attention, text.warnings) == ("text", "a good film", "7",
                                                                                   True, [])  # fmt: skip
    image = decode({"image": "data:image/png;base64," + b64(png_bytes(200, size=20))}, everything)
    assert image.task.name == "image" and image.raw.size == (20, 20) and image.raw.mode == "L"
    audio = decode({"audio": b64(wav_bytes(seconds=0.1))}, everything)
    assert audio.raw["sample_rate"] == 8000 and audio.raw["audio"].shape == (1, 800)
    protein = decode({"protein": ">P1 some protein\nMKTA\nYIAK\n"}, everything)
    assert protein.task.name == "protein" and protein.raw == "MKTAYIAK"


def test_an_rgb_upload_is_converted_to_the_models_grey_channel(everything: ServedModel) -> None:
    import PIL.Image

    buffer = io.BytesIO()
    PIL.Image.fromarray(np.zeros((16, 16, 3), dtype=np.uint8)).save(buffer, format="PNG")
    form = FormData([("file", upload("photo.png", buffer.getvalue()))])
    decoded = decode(form, served("image"))
    assert decoded.raw.mode == "L"
    assert decode(FormData([("image", upload("x.bin", buffer.getvalue()))]), everything).task.name == "image"


def test_text_past_max_length_is_truncated_and_said_so(everything: ServedModel) -> None:
    decoded = decode({"text": "good " * 100}, everything)
    assert len(decoded.warnings) == 1
    assert "truncated" in decoded.warnings[0] and "limit of 32" in decoded.warnings[0]
    assert decode({"text": "good " * 5}, everything).warnings == []  # counter-test: short text, no warning


@pytest.mark.parametrize(
    ("payload", "status", "words"),
    [
        ({}, 400, "holds no input"),
        ({"txt": "typo"}, 400, "unknown field"),
        ({"text": "a", "image": "b"}, 400, "2 inputs"),
        ({"text": 5}, 400, "must be a string"),
        ({"text": "   "}, 422, "is empty"),
        ({"image": "not base64!"}, 400, "not valid base64"),
        ({"image": ""}, 422, "0 bytes"),
        ({"image": b64(b"\x89PNG\r\n\x1a\n broken")}, 422, "cannot be decoded"),
        ({"audio": b64(b"RIFF....WAVEfmt but not audio at all")}, 422, "cannot be decoded"),
        ({"audio": b64(wav_bytes(seconds=0.01))}, 422, "10.0 ms long"),
        ({"protein": "MKV1Z"}, 422, "not in the ESM alphabet"),
        ({"text": "fine", "task": "nope"}, 400, "not served"),
        ({"text": "fine", "task": "image"}, 422, "reads image, not text"),
        ({"text": "fine", "attention": "maybe"}, 400, "true or false"),
        ({"text": "fine", "id": [1]}, 400, "id must be"),
    ],
)
def test_bad_requests_are_refused_with_a_status_and_one_line(
    everything: ServedModel, payload: dict[str, Any], status: int, words: str
) -> None:
    got, message = refused(payload, everything)
    assert got == status and words in message, message


def test_the_wrong_modality_for_the_run_names_what_it_reads() -> None:
    status, message = refused({"image": b64(png_bytes(10))}, served("text"))
    assert status == 422 and "this run reads text, not image" in message and '{"text"' in message


def test_a_clip_of_one_analysis_window_is_accepted(everything: ServedModel) -> None:
    """Counter-test of the 10 ms refusal: 30 ms is more than the 25 ms window and is read."""
    assert decode({"audio": b64(wav_bytes(seconds=0.03))}, everything).raw["audio"].shape == (1, 240)


def test_unknown_residues_under_the_x_policy_are_read_and_reported(tmp_path: Path) -> None:
    run = tiny_run("protein", tmp=tmp_path)
    lenient = ProteinTokenizer(max_length=40, unknown="x")
    model = served(
        protein=TrainedRun(run.model, lenient, run.class_names, run.config_path, run.checkpoint_path)
    )
    decoded = decode({"protein": "MKVJZ"}, model)
    assert decoded.warnings == ["letters outside the amino-acid alphabet ['J'] were read as X"]


def test_a_joint_run_with_two_tasks_of_one_modality_needs_the_task_named(tmp_path: Path) -> None:
    model = served(a=tiny_run("text", tmp=tmp_path), b=tiny_run("text", tmp=tmp_path))
    status, message = refused({"text": "fine"}, model)
    assert status == 400 and "several text tasks ['a', 'b']" in message
    assert decode({"text": "fine", "task": "b"}, model).task.name == "b"


def test_a_file_part_takes_the_modality_its_name_says_in_a_joint_run(everything: ServedModel) -> None:
    decoded = decode(FormData([("file", upload("clip.wav", wav_bytes()))]), everything)
    assert decoded.task.name == "audio"
    status, message = refused(FormData([("file", upload("blob.bin", b"1234"))]), everything)
    assert status == 400 and "name the part one of" in message


def test_repeated_form_fields_and_bad_text_files_are_refused(everything: ServedModel) -> None:
    assert refused(FormData([("text", "a"), ("text", "b")]), everything)[0] == 400
    status, message = refused(FormData([("text", upload("x.txt", b"\xff\xfe\xfa"))]), everything)
    assert status == 422 and "not UTF-8" in message
