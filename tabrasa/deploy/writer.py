"""Prediction rows → a CSV or JSONL file, chosen by the output's suffix, written atomically."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from tabrasa.deploy.predictor import Row
from tabrasa.errors import UserError
from tabrasa.io import atomic_write


def write_rows(rows: Sequence[Row], columns: Sequence[str], path: str | Path) -> Path:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise UserError(f"--out {path}: write predictions to a .csv or .jsonl file")

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="") as handle:
            if suffix == ".csv":
                writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
                writer.writeheader()
                writer.writerows(rows)
            else:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    atomic_write(path, write)
    return path
