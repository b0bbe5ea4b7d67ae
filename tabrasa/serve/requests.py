"""A request body → one checked raw example for one task of the served run.

A body holds exactly one input, named by its modality: `text` or `protein` (a string; a protein may be FASTA
text, whose first record is read), `image` or `audio` (base64 of the file's bytes, a `data:` URL prefix
allowed) as JSON, or the same names as multipart parts (files or plain fields); a multipart part named
`file` takes the run's modality (or, for a joint run, the one its file name's suffix says). Options:
`task` (which task of a joint run), `attention` (true: also return the attention view), `id` (echoed).

The example is decoded for its modality and encoded once by the task's tokenizer, so everything the model
cannot read is refused here, per request (a batch never fails for one bad member), and what the tokenizer
cut or replaced (text past max_length, unknown residues) is reported as a warning. Every refusal is a
`BadInputError` with an HTTP status (400: the request is malformed; 422: it is well formed but the model
cannot use its input) and a one-line message naming the input, the problem and the fix.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tabrasa.deploy.modality import kind_of_path
from tabrasa.deploy.predictor import ENCODE_ERRORS
from tabrasa.inspect.source import Modality
from tabrasa.serve.model import ServedModel, ServedTask
from tabrasa.serve.refusals import BadInputError
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.protein import RESIDUES

INPUT_FIELDS: tuple[Modality, ...] = ("text", "image", "audio", "protein")
OPTION_FIELDS = ("task", "attention", "id")
FILE_FIELD = "file"
EXAMPLES: dict[str, str] = {
    "text": '{"text": "a fine film"}',
    "protein": '{"protein": "MKTAYIAKQR"}',
    "image": '{"image": "<base64 of a PNG or JPEG file>"}',
    "audio": '{"audio": "<base64 of a WAV, FLAC or OGG file>"}',
}
MAX_PIXELS = 40_000_000  # a small compressed file can hold a huge image; decode at most 40 MP
TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


@dataclass
class Decoded:
    """One checked request: the raw example for `task`'s tokenizer, and what its encoding reported."""

    id: str
    task: ServedTask
    raw: Any
    attention: bool = False
    warnings: list[str] = field(default_factory=list)


def decode(payload: Mapping[str, Any], model: ServedModel) -> Decoded:
    """A parsed JSON object or form (LitServe hands over either) → a Decoded example, or BadInputError."""
    modality, value, options = read_fields(payload, model)
    task = choose_task(model, modality, options.get("task"))
    warnings: list[str] = []
    raw = read_value(modality, value, task.tokenizer, warnings)
    warnings.extend(encoding_warnings(task.tokenizer, modality, raw))
    return Decoded(options.get("id", "0"), task, raw, options.get("attention", False), warnings)


def read_fields(payload: Mapping[str, Any], model: ServedModel) -> tuple[Modality, Any, dict[str, Any]]:
    """(the input's modality, its value, the options) of a body, with every structural mistake refused."""
    items = list(payload.multi_items()) if hasattr(payload, "multi_items") else list(payload.items())
    keys = [key for key, _ in items]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise BadInputError(400, f"the request names {repeated} more than once; send each field once")
    allowed = (*INPUT_FIELDS, FILE_FIELD, *OPTION_FIELDS)
    unknown = [key for key in keys if key not in allowed]
    hint = f"send one of {', '.join(INPUT_FIELDS)} (or a file part), with optional {', '.join(OPTION_FIELDS)}"
    if unknown:
        raise BadInputError(400, f"the request has unknown field(s) {unknown}; {hint}")
    inputs = [key for key in keys if key in (*INPUT_FIELDS, FILE_FIELD)]
    if not inputs:
        first = next(iter(model.tasks.values())).modality
        raise BadInputError(400, f"the request holds no input; {hint}, e.g. {EXAMPLES[first]}")
    if len(inputs) > 1:
        raise BadInputError(
            400, f"the request holds {len(inputs)} inputs ({', '.join(inputs)}); send one input per request "
            f"(concurrent requests are batched together)"
        )  # fmt: skip
    name, value = inputs[0], payload[inputs[0]]
    modality = file_modality(value, model) if name == FILE_FIELD else name
    return modality, value, read_options(payload)  # type: ignore[return-value]


def file_modality(upload: Any, model: ServedModel) -> Modality:
    """The modality of a part named `file`: the run's, if it reads one kind; else its file name's."""
    served = sorted({task.modality for task in model.tasks.values()})
    if len(served) == 1:
        return served[0]  # type: ignore[return-value]
    name = getattr(upload, "filename", None) or ""
    kind = kind_of_path(Path(name)) if name else None
    if kind is None:
        raise BadInputError(
            400, f"cannot tell which input the file part {name!r} is from its name; name the part one of "
            f"{', '.join(served)} instead of file"
        )  # fmt: skip
    return kind


def read_options(payload: Mapping[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if "task" in payload:
        task = payload["task"]
        if not isinstance(task, str) or not task:
            raise BadInputError(400, f"task must be a task name (a string), not {task!r}")
        options["task"] = task
    if "attention" in payload:
        options["attention"] = as_flag(payload["attention"])
    if "id" in payload:
        ident = payload["id"]
        if not isinstance(ident, str | int) or isinstance(ident, bool):
            raise BadInputError(400, f"id must be a string or an integer, not {type(ident).__name__}")
        options["id"] = str(ident)
    return options


def as_flag(value: Any) -> bool:
    """A JSON boolean, or a form field's 1/true/yes/on (0/false/no/off/empty)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
        return value.strip().lower() in TRUE
    raise BadInputError(400, f"attention must be true or false, not {value!r}")


def choose_task(model: ServedModel, modality: Modality, requested: str | None) -> ServedTask:
    """The task that reads this input: the named one, or the only task of the input's modality."""
    if requested is not None:
        task = model.tasks.get(requested)
        if task is None:
            raise BadInputError(400, f"task {requested!r} is not served; the tasks are {sorted(model.tasks)}")
        if task.modality != modality:
            raise BadInputError(
                422,
                f"task {requested!r} reads {task.modality}, not {modality}; send {EXAMPLES[task.modality]}",
            )
        return task
    matching = [task for task in model.tasks.values() if task.modality == modality]
    if not matching:
        served = sorted({task.modality for task in model.tasks.values()})
        raise BadInputError(
            422, f"this run reads {' and '.join(served)}, not {modality}; send {EXAMPLES[served[0]]}"
        )  # fmt: skip
    if len(matching) > 1:
        names = [task.name for task in matching]
        raise BadInputError(400, f'this run has several {modality} tasks {names}; name one with "task"')
    return matching[0]


def read_value(modality: Modality, value: Any, tokenizer: Tokenizer, warnings: list[str]) -> Any:
    """The field's value decoded into what the modality's tokenizer takes."""
    if modality == "image":
        return read_image(payload_bytes(value, "image"), int(getattr(tokenizer, "channels", 3)))
    if modality == "audio":
        return read_audio(payload_bytes(value, "audio"), float(getattr(tokenizer, "win_ms", 25.0)))
    text = payload_text(value, modality)
    if modality == "protein" and text.lstrip().startswith(">"):
        text = first_fasta_record(text, warnings)
    if not text.strip():
        raise BadInputError(422, f"the {modality} is empty; send {EXAMPLES[modality]}")
    return text


def payload_bytes(value: Any, modality: str) -> bytes:
    """A file part's bytes, or a string field's base64 (a `data:...;base64,` prefix is dropped)."""
    if hasattr(value, "file"):  # an uploaded file (starlette UploadFile)
        value.file.seek(0)
        return value.file.read()
    if not isinstance(value, str):
        raise BadInputError(
            400, f"{modality} must be base64 text (or a file part), not {type(value).__name__}"
        )
    encoded = value.split(",", 1)[1] if value.startswith("data:") and "," in value else value
    try:
        return base64.b64decode("".join(encoded.split()), validate=True)
    except (binascii.Error, ValueError) as error:
        raise BadInputError(
            400, f"{modality} is not valid base64 ({error}); send the file's bytes base64-encoded"
        ) from error


def payload_text(value: Any, modality: str) -> str:
    if hasattr(value, "file"):
        value.file.seek(0)
        data = value.file.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BadInputError(
                422, f"the {modality} file is not UTF-8 text ({error}); send UTF-8"
            ) from error
    if not isinstance(value, str):
        raise BadInputError(
            400, f"{modality} must be a string, not {type(value).__name__}; send {EXAMPLES[modality]}"
        )
    return value


def first_fasta_record(text: str, warnings: list[str]) -> str:
    """The residues of the first record of FASTA text; a note when more records follow."""
    records = text.lstrip()[1:].split("\n>")
    header, _, body = records[0].partition("\n")
    if len(records) > 1:
        first = (header.split() or ["without a name"])[0]
        warnings.append(f"the FASTA text holds {len(records)} records; only the first ({first}) "
                        f"was read, send one request per sequence")  # fmt: skip
    return "".join(body.split())


def read_image(data: bytes, channels: int) -> Any:
    """Fully decoded (PIL opens lazily) and converted to the model's channels: grey (1) or RGB (3)."""
    import PIL.Image

    if not data:
        raise BadInputError(422, "the image is empty (0 bytes); send a PNG, JPEG or other image file")
    try:
        with PIL.Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise BadInputError(
                    422, f"the image is {width}x{height} pixels, over the {MAX_PIXELS // 10**6} MP the "
                    f"server decodes; send a smaller image"
                )  # fmt: skip
            image.load()
            return image.convert("L" if channels == 1 else "RGB")
    except BadInputError:
        raise
    except (OSError, SyntaxError, ValueError, PIL.Image.DecompressionBombError) as error:
        raise BadInputError(
            422, f"the image cannot be decoded ({error}); send a valid PNG, JPEG or other image"
        ) from error


def read_audio(data: bytes, min_ms: float) -> dict[str, Any]:
    """(C, T) float32 samples and their rate, read by libsndfile; a clip shorter than one analysis window
    holds no complete frame (the tokenizer would pad it with silence), so it is refused."""
    import soundfile

    if not data:
        raise BadInputError(422, "the audio is empty (0 bytes); send a WAV, FLAC or OGG file")
    try:
        wave, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)  # (T, C)
    except (RuntimeError, TypeError, ValueError, soundfile.LibsndfileError) as error:
        raise BadInputError(
            422, f"the audio cannot be decoded ({error}); send a valid WAV, FLAC or OGG file"
        ) from error
    duration_ms = 1000.0 * wave.shape[0] / rate
    if duration_ms < min_ms:
        raise BadInputError(
            422, f"the clip is {duration_ms:.1f} ms long, shorter than the model's {min_ms:g} ms analysis "
            f"window; send at least {min_ms:g} ms of audio"
        )  # fmt: skip
    return {"audio": np.ascontiguousarray(wave.T), "sample_rate": int(rate)}


def encoding_warnings(tokenizer: Tokenizer, modality: Modality, raw: Any) -> list[str]:
    """Encode once, so an input the tokenizer refuses is a 422 here; what it cut or replaced, as notes."""
    try:
        encoded = tokenizer.encode(raw)
    except ENCODE_ERRORS as error:
        raise BadInputError(422, f"the {modality} cannot be encoded for this model: {error}") from error
    notes = []
    removed = int(encoded["truncated"]) if "truncated" in encoded else 0
    if removed:
        notes.append(truncation_note(tokenizer, modality, removed))
    if modality == "protein" and getattr(tokenizer, "unknown", "error") != "error":
        unknown = sorted({letter for letter in tokenizer.clean(raw) if letter not in RESIDUES})  # type: ignore[attr-defined]
        if unknown:
            replacement = "X" if tokenizer.unknown == "x" else "<unk>"  # type: ignore[attr-defined]
            notes.append(f"letters outside the amino-acid alphabet {unknown} were read as {replacement}")
    return notes


def truncation_note(tokenizer: Tokenizer, modality: Modality, removed: int) -> str:
    unit = {"text": "tokens", "protein": "residues"}.get(modality, "frames")
    limit = getattr(tokenizer, "max_length", None) or getattr(tokenizer, "max_frames", None)
    policy = getattr(tokenizer, "truncation", "head")
    kept = {"head": "the first", "tail": "the last", "head_tail": "the first and last"}.get(policy, "some")
    return (
        f"the {modality} was truncated: {removed} {unit} past the model's limit of {limit} were dropped "
        f"(truncation {policy!r} keeps {kept} {unit})"
    )
