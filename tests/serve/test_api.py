"""The LitAPI in process, through the hooks LitServe calls (decode_request, batch, predict, unbatch,
encode_response): a batch mixing good and bad requests answers each alone, with the Predictor's rows."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import PIL.Image
import pytest
from fastapi import HTTPException
from starlette.requests import Request

from tabrasa.backbone.sequence_cnn import SequenceCNN
from tabrasa.deploy.run import TrainedRun
from tabrasa.inspect import attention_maps, attention_rollout
from tabrasa.serve.api import TabrasaAPI
from tabrasa.serve.model import ServedModel, ServeSource
from tabrasa.tasks import Classifier
from tests.deploy.conftest import CLASSES, text_tokenizer
from tests.serve.conftest import served
from tests.serve.runs import png_bytes, wav_bytes


def api_for(model: ServedModel, max_batch_size: int = 8, key: str | None = None) -> TabrasaAPI:
    api = TabrasaAPI(ServeSource("tiny"), max_batch_size=max_batch_size, api_key=key)
    api.pre_setup()  # what LitServer does when it takes the API
    api.model = model  # what setup() loads in a worker
    return api


def respond(api: TabrasaAPI, payloads: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """One LitServe batch, as its batched loop runs the hooks."""
    items = [api.decode_request(payload) for payload in payloads]  # type: ignore[arg-type]
    outputs = api.unbatch(api.predict(api.batch(items)))
    answers = [api.encode_response(output) for output in outputs]
    return [(answer.status_code, json.loads(answer.body)) for answer in answers]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def everything() -> ServedModel:
    return served("text", "image", "audio", "protein")


def test_a_mixed_batch_answers_each_request_alone_with_the_predictor_rows(everything: ServedModel) -> None:
    texts = ["a good film", "the plot was bad and slow"]
    answers = respond(
        api_for(everything),
        [
            {"text": texts[0], "id": "a"},
            {"protein": "MK1Z"},
            {"image": b64(png_bytes(90))},
            {"text": texts[1]},
        ],
    )
    assert [status for status, _ in answers] == [200, 422, 200, 200]
    assert "residue 3" in answers[1][1]["detail"]
    expected = everything.tasks["text"].predictor.predict(texts, ids=["a", "0"])
    for (_, body), row in zip((answers[0], answers[3]), expected, strict=True):
        assert list(body)[:5] == everything.tasks["text"].predictor.columns()  # predict-files' columns
        assert body["prediction"] == row["prediction"] and body["id"] == row["id"]
        assert body["prob_pos"] == pytest.approx(row["prob_pos"], abs=1e-6)
        assert body["task"] == "text" and body["warnings"] == [] and "attention" not in body
    assert answers[2][1]["task"] == "image" and answers[2][1]["prediction"] in CLASSES


def test_without_batching_one_request_is_one_call(everything: ServedModel) -> None:
    api = api_for(everything, max_batch_size=1)
    output = api.predict(api.decode_request({"text": "a good film"}))  # type: ignore[arg-type]
    answer = api.encode_response(output)
    assert answer.status_code == 200 and json.loads(answer.body)["prediction"] in CLASSES


def test_a_failing_forward_refuses_only_that_tasks_requests(
    everything: ServedModel, monkeypatch: Any
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(everything.tasks["image"].predictor, "predict_inputs", broken)
    answers = respond(api_for(everything), [{"image": b64(png_bytes(9))}, {"text": "fine"}])
    assert [status for status, _ in answers] == [500, 200]
    assert "a bug" not in answers[0][1]["detail"]  # the internals stay in the log


def test_text_attention_is_the_rollout_of_the_captured_weights(everything: ServedModel) -> None:
    ((status, body),) = respond(api_for(everything), [{"text": "the acting was good", "attention": True}])
    view = body["attention"]
    assert status == 200 and view["kind"] == "tokens" and view["layers"] == 2 and view["heads"] == 4
    assert len(view["tokens"]) == len(view["heat"]) == len(view["matrices"][0])
    task = everything.tasks["text"]
    batch = task.tokenizer.collate([task.tokenizer.encode("the acting was good")])
    reference = attention_rollout(attention_maps(task.model, None, batch).example(0)).mean(axis=0)
    np.testing.assert_allclose(view["heat"], reference, atol=1e-4)  # mean pooling: the rows' mean
    assert sum(view["heat"]) == pytest.approx(1.0, abs=1e-3)


def test_image_and_audio_attention_come_with_their_picture(everything: ServedModel) -> None:
    answers = respond(
        api_for(everything),
        [{"image": b64(png_bytes(200)), "attention": True}, {"audio": b64(wav_bytes()), "attention": True}],
    )
    image, audio = answers[0][1]["attention"], answers[1][1]["attention"]
    assert image["kind"] == "image" and image["grid"] == [4, 4] and np.shape(image["heat"]) == (4, 4)
    assert picture(image["picture"]).size == (16, 16)
    assert audio["kind"] == "audio" and len(audio["strip"]) == audio["frames"] == 51  # 0.5 s, 10 ms hop
    assert picture(audio["picture"]).size == (51, 16)  # frames across, mel bins up


def picture(data_url: str) -> PIL.Image.Image:
    prefix = "data:image/png;base64,"
    assert data_url.startswith(prefix)
    return PIL.Image.open(io.BytesIO(base64.b64decode(data_url[len(prefix) :])))


def test_a_backbone_without_attention_still_predicts(tmp_path: Path) -> None:
    tokenizer = text_tokenizer()
    model = Classifier(tokenizer, len(CLASSES), SequenceCNN(dim=32, blocks=1)).eval()
    run = TrainedRun(model, tokenizer, CLASSES, tmp_path / "config.yaml", tmp_path / "model.ckpt")
    ((status, body),) = respond(api_for(served(text=run)), [{"text": "a good film", "attention": True}])
    assert status == 200 and body["attention"] is None
    assert "no attention view" in body["warnings"][0]


def request_with(headers: dict[str, str]) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "POST", "path": "/predict", "headers": raw})


def test_the_api_key_is_checked_in_either_header(everything: ServedModel) -> None:
    api = api_for(everything, key="s3cret")
    api.authorize(request_with({"X-API-Key": "s3cret"}))
    api.authorize(request_with({"Authorization": "Bearer s3cret"}))
    for wrong in ({}, {"X-API-Key": "s3cre"}, {"Authorization": "Basic s3cret"}):
        with pytest.raises(HTTPException) as caught:
            api.authorize(request_with(wrong))
        assert caught.value.status_code == 401
    api_for(everything).authorize(request_with({}))  # no key configured: open
