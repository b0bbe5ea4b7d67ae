"""Predictions on raw examples: encode one by one (a bad example is reported, not fatal), batch, run, rows.

A row is a flat dict: `id`, `prediction` (the class name; the value for a regressor), one `prob_<class>`
column per class, and `error` (empty, or why the input could not be used). `tabrasa.load(run).predict(...)`
and `tabrasa predict-files` return the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from tabrasa.deploy.modality import Modality, modality_of
from tabrasa.deploy.readers import RawInput, read_inputs
from tabrasa.deploy.run import CheckpointChoice, TrainedRun, load_run
from tabrasa.tokenizers.base import Batch

Row = dict[str, Any]
# Failures of one example's encoding: unreadable or malformed content, never a bug in the model.
ENCODE_ERRORS = (ValueError, TypeError, KeyError, OSError, RuntimeError)


class Predictor:
    """A trained run ready to predict; build it with `tabrasa.load(run_or_checkpoint)`."""

    def __init__(self, run: TrainedRun, device: str | torch.device = "cpu") -> None:
        self.run = run
        self.device = torch.device(device)
        self.model = run.model.to(self.device).eval()
        self.tokenizer = run.tokenizer.eval()  # no augmentation at inference
        self.modality: Modality = modality_of(self.tokenizer)

    @property
    def class_names(self) -> Sequence[str] | None:
        return self.run.class_names

    def columns(self) -> list[str]:
        names = self.class_names or []
        return ["id", "prediction", *(f"prob_{name}" for name in names), "error"]

    def predict(
        self,
        raws: Sequence[Any],
        ids: Sequence[str] | None = None,
        batch_size: int = 32,
        progress: bool = False,
    ) -> list[Row]:
        """One row per raw example, in order. `ids` default to the positions 0, 1, ..."""
        labels = [str(i) for i in range(len(raws))] if ids is None else list(ids)
        return self.predict_inputs(
            [RawInput(i, raw) for i, raw in zip(labels, raws, strict=True)], batch_size, progress
        )

    def predict_files(
        self, path: str | Path, column: str | None = None, batch_size: int = 32, progress: bool = True
    ) -> list[Row]:
        return self.predict_inputs(read_inputs(path, self.modality, column), batch_size, progress)

    def predict_inputs(
        self, inputs: Sequence[RawInput], batch_size: int = 32, progress: bool = False
    ) -> list[Row]:
        rows: list[Row | None] = [None] * len(inputs)
        pending: list[tuple[int, Batch]] = []
        bar = tqdm(total=len(inputs), desc="predicting", unit="input", disable=not progress)
        for index, item in enumerate(inputs):
            encoded, error = self._encode(item)
            if encoded is None:
                rows[index] = self._error_row(item.id, error)
                bar.update(1)
                continue
            pending.append((index, encoded))
            if len(pending) == batch_size:
                self._flush(pending, inputs, rows, bar)
        self._flush(pending, inputs, rows, bar)
        bar.close()
        return [row for row in rows if row is not None]

    def _encode(self, item: RawInput) -> tuple[Batch | None, str]:
        if item.error is not None:
            return None, item.error
        try:
            return self.tokenizer.encode(item.value), ""
        except ENCODE_ERRORS as error:
            return None, f"{type(error).__name__}: {error}"

    def _flush(
        self, pending: list[tuple[int, Batch]], inputs: Sequence[RawInput], rows: list[Row | None], bar: Any
    ) -> None:
        if not pending:
            return
        examples = [encoded for _, encoded in pending]
        try:
            outputs = self._forward(self.tokenizer.collate(examples))
        except ENCODE_ERRORS as error:  # e.g. images of different sizes with no image_size to resize to
            if len(pending) > 1:  # retry one by one, so only the offending inputs are reported
                for single in [[p] for p in pending]:
                    self._flush(single, inputs, rows, bar)
                pending.clear()
                return
            index = pending[0][0]
            rows[index] = self._error_row(inputs[index].id, f"{type(error).__name__}: {error}")
            bar.update(1)
            pending.clear()
            return
        for (index, _), output in zip(pending, outputs, strict=True):
            rows[index] = self._row(inputs[index].id, output)
        bar.update(len(pending))
        pending.clear()

    @torch.inference_mode()
    def _forward(self, batch: Batch) -> torch.Tensor:
        batch = {k: v.to(self.device) for k, v in batch.items() if isinstance(v, torch.Tensor)}
        return self.model.objective.predictions(self.model(batch)).cpu()

    def _row(self, id_: str, output: torch.Tensor) -> Row:
        names = self.class_names
        if names is None:  # regression: the value(s)
            value: Any = output.tolist()
            return {"id": id_, "prediction": value, "error": ""}
        probs = output.tolist()
        best = max(range(len(probs)), key=probs.__getitem__)
        return {
            "id": id_,
            "prediction": names[best],
            **{f"prob_{name}": p for name, p in zip(names, probs, strict=True)},
            "error": "",
        }

    def _error_row(self, id_: str, error: str) -> Row:
        row: Row = {"id": id_, "prediction": ""}
        row.update({f"prob_{name}": "" for name in self.class_names or []})
        row["error"] = error
        return row


def load(
    run_or_checkpoint: str | Path, ckpt: CheckpointChoice = "best", device: str | torch.device = "cpu"
) -> Predictor:
    """A trained run (folder or checkpoint file) ready to `predict([...raw inputs...])`."""
    return Predictor(load_run(run_or_checkpoint, ckpt), device)


def errors_in(rows: Iterable[Row]) -> int:
    return sum(1 for row in rows if row.get("error"))
