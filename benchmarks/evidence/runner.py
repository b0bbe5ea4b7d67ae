"""Run the claims at one scale, print the table, write results/claims.json and results/claims.md.

`--only` runs some claims and merges them into the claims.json already in the folder (same scale and
seeds), so that one claim can be rerun without dropping the others' rows. Each claim's row records the run
that produced it (`settings.runs`: device, threads, torch, when it finished)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.evidence.claims import CLAIMS
from benchmarks.evidence.presets import PRESETS, SEEDS
from benchmarks.evidence.report import ClaimResult, markdown_table, write


def select(only: Sequence[str] | None) -> list[str]:
    if not only:
        return list(CLAIMS)
    unknown = [key for key in only if key not in CLAIMS]
    if unknown:
        raise ValueError(f"unknown claim(s) {unknown}; choose among {list(CLAIMS)}")
    return [key for key in CLAIMS if key in only]


def run_claims(
    scale: str, device: torch.device, threads: int, out_dir: Path, only: Sequence[str] | None = None
) -> list[ClaimResult]:
    if scale not in PRESETS:
        raise ValueError(f"scale={scale!r} is not known; choose one of {list(PRESETS)}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda was asked for but torch sees no GPU; use --device cpu")
    torch.set_num_threads(threads)
    settings, seeds = PRESETS[scale](), SEEDS[scale]
    results = []
    for key in select(only):
        start = time.perf_counter()
        print(f"[{scale}] {key} …", file=sys.stderr, flush=True)
        result = CLAIMS[key](settings[key], seeds, device)
        result.seconds = time.perf_counter() - start
        print(
            f"[{scale}] {key}: {result.measured} → {result.verdict} ({result.seconds:.0f} s)", file=sys.stderr
        )
        results.append(result)
    finished = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    run = {"device": str(device), "threads": threads, "torch": torch.__version__, "finished": finished}
    used: dict[str, Any] = {
        "scale": scale,
        "seeds": list(seeds),
        "claims": {key: dataclasses.asdict(settings[key]) for key in select(only)},
        "runs": {key: run for key in select(only)},
    }
    if only:
        results, used = merge(out_dir / "claims.json", results, used)
    write(results, out_dir, used)
    return results


def merge(
    path: Path, results: list[ClaimResult], used: dict[str, Any]
) -> tuple[list[ClaimResult], dict[str, Any]]:
    """The claims in `path` with `results` in place of their rows (rows in the table's order) and the
    settings of both; `results` alone when there is no file yet. A file of another scale or other seeds
    is refused: its rows and these could not share one table."""
    if not path.exists():
        return results, used
    old = json.loads(path.read_text())
    settings = old["settings"]
    if (settings["scale"], settings["seeds"]) != (used["scale"], used["seeds"]):
        raise ValueError(
            f"{path} holds scale {settings['scale']!r} seeds {settings['seeds']}, this run "
            f"{used['scale']!r} {used['seeds']}: merge into another --out, or rerun every claim there"
        )
    # Files written before runs were recorded per claim held one run's device, threads and torch.
    legacy = {name: settings.pop(name) for name in ("device", "threads", "torch") if name in settings}
    runs = settings.setdefault("runs", {})
    for key in settings["claims"]:
        runs.setdefault(key, legacy)
    rerun = {r.key for r in results}
    for key in rerun:
        settings.get("separate_runs", {}).pop(key, None)  # a note on a row this run replaces
    if not settings.get("separate_runs", True):
        settings.pop("separate_runs")
    settings["claims"].update(used["claims"])
    runs.update(used["runs"])
    rows = {c["key"]: ClaimResult(**c) for c in old["claims"]} | {r.key: r for r in results}
    ordered = [rows[key] for key in CLAIMS if key in rows]
    settings["claims"] = {key: settings["claims"][key] for key in CLAIMS if key in settings["claims"]}
    settings["runs"] = {key: runs[key] for key in CLAIMS if key in runs}
    return ordered, settings


def main_table(results: Sequence[ClaimResult]) -> str:
    total = sum(r.seconds for r in results)
    return f"{markdown_table(results)}\n\n{len(results)} claims, {total:.0f} s of runs"
