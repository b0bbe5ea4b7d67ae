"""The LitServe API of a trained run: decode and check each request, predict a dynamic batch, answer JSON.

LitServe (https://github.com/Lightning-AI/LitServe) runs `setup` once per inference worker, then for every
batch it assembles (up to `max_batch_size` requests, waiting at most `batch_timeout` seconds):
`decode_request` on each request, `batch`, `predict`, `unbatch`, and `encode_response` on each output.
LitServe fails the whole batch when any of these raises, so nothing here raises for one request's input:
a refused request travels through the batch as a `Refusal` and is answered alone with its 4xx. (LitServe's
own `batch` and `unbatch` keep the list as it is, which is what is needed here.)

The answer to a good request is the Predictor's row (the columns `tabrasa predict-files` writes: `id`,
`prediction`, one `prob_<class>` per class, `error`), plus `task`, `modality`, `warnings` (what the
tokenizer cut or replaced) and, when the request asked for it, `attention` (tabrasa/serve/attention.py).
"""

import hmac
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import litserve as ls
from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse, Response

from tabrasa.deploy.readers import RawInput
from tabrasa.errors import UserError
from tabrasa.serve.attention import attention_view
from tabrasa.serve.model import ServedModel, ServeSource, load_served
from tabrasa.serve.refusals import BadInputError, one_line, refusal
from tabrasa.serve.requests import Decoded, decode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


@dataclass
class Answer:
    row: dict[str, Any]


Item = Decoded | Refusal


def key_matches(request: Request, key: str) -> bool:
    """`X-API-Key: KEY` or `Authorization: Bearer KEY`, compared in constant time."""
    given = request.headers.get("x-api-key")
    if given is None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        given = token.strip() if scheme.lower() == "bearer" else None
    return given is not None and hmac.compare_digest(given.encode(), key.encode())


class TabrasaAPI(ls.LitAPI):
    """source: the run to serve (loaded in each worker's `setup`); api_key: None for an open server."""

    def __init__(
        self,
        source: ServeSource,
        max_batch_size: int = 8,
        batch_timeout: float = 0.01,
        api_key: str | None = None,
    ) -> None:
        super().__init__(max_batch_size=max_batch_size, batch_timeout=batch_timeout, api_path="/predict")
        self.source = source
        self.api_key = api_key
        self.model: ServedModel | None = None

    def setup(self, device: str) -> None:
        self.model = load_served(self.source, device)

    def authorize(self, request: Request) -> None:
        """LitServe's auth hook (a FastAPI dependency of /predict, /health and /info)."""
        if self.api_key and not key_matches(request, self.api_key):
            raise HTTPException(401, "missing or wrong API key; send it as X-API-Key: KEY")

    # LitServe reads this annotation as the endpoint's request type: with `Request` it parses the JSON or
    # form body itself and hands over the result (a dict or a FormData), so the annotation stays evaluated
    # (no `from __future__ import annotations` in this module).
    def decode_request(self, request: Request) -> Item:
        assert self.model is not None, "setup() loads the model first"
        try:
            return decode(request, self.model)  # type: ignore[arg-type]
        except BadInputError as error:
            return Refusal(error.status, str(error))
        except Exception:  # a bug must not fail the other requests of the batch
            log.exception("reading a request failed")
            return Refusal(500, "the server failed to read this request (the error is in its log)")

    def predict(self, x: Any) -> Any:
        if self.max_batch_size == 1:  # LitServe's unbatched loop hands one request over, not a list
            return self.answer([x])[0]
        return self.answer(x)

    def encode_response(self, output: Answer | Refusal) -> Response:
        if isinstance(output, Refusal):
            return refusal(output.status, output.message)
        return JSONResponse(output.row)

    def answer(self, items: Sequence[Item]) -> list[Answer | Refusal]:
        """Each task's requests predicted as one batch; refusals passed through in place."""
        results: dict[int, Answer | Refusal] = {
            i: it for i, it in enumerate(items) if isinstance(it, Refusal)
        }
        by_task: dict[str, list[int]] = {}
        for index, item in enumerate(items):
            if isinstance(item, Decoded):
                by_task.setdefault(item.task.name, []).append(index)
        for indices in by_task.values():
            decoded = [cast(Decoded, items[i]) for i in indices]
            results.update(zip(indices, self.predict_task(decoded), strict=True))
        return [results[index] for index in range(len(items))]

    def predict_task(self, decoded: Sequence[Decoded]) -> list[Answer | Refusal]:
        task = decoded[0].task
        try:
            rows = task.predictor.predict_inputs(
                [RawInput(item.id, item.raw) for item in decoded], batch_size=len(decoded)
            )
        except Exception:
            log.exception("a batch of %d %s requests failed", len(decoded), task.name)
            return [Refusal(500, "the model failed on this batch (the error is in the server's log)")] * len(
                decoded
            )
        return [self.finish(item, row) for item, row in zip(decoded, rows, strict=True)]

    def finish(self, item: Decoded, row: dict[str, Any]) -> Answer | Refusal:
        if row.get("error"):
            return Refusal(422, f"the {item.task.modality} cannot be used by this model: {row['error']}")
        answer = {**row, "task": item.task.name, "modality": item.task.modality, "warnings": item.warnings}
        if item.attention:
            try:
                answer["attention"] = attention_view(item.task, item.raw)
            except UserError as error:  # e.g. a CNN or LSTM backbone: the prediction stands without it
                answer["attention"] = None
                answer["warnings"] = [*item.warnings, f"no attention view: {one_line(str(error))}"]
            except Exception:  # a bug in drawing must not cost the prediction, nor the batch
                log.exception("the attention view of a %s request failed", item.task.name)
                answer["attention"] = None
                answer["warnings"] = [
                    *item.warnings,
                    "no attention view: it failed (the error is in the log)",
                ]
        return Answer(answer)
