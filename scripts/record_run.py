"""Run one `tabrasa fit` command, time it, and record its test metrics from the metrics.csv it wrote.

    python scripts/record_run.py --out results/pretrained_finetune/fashion_mnist_dinov2.json \
        --logs /tmp/fmd -- nice -n 5 tabrasa fit --config configs/image/fashion_mnist_dinov2.yaml \
        --trainer.default_root_dir /tmp/fmd --trainer.logger.init_args.save_dir /tmp/fmd

`--logs` is the CSVLogger's save_dir for this run; the newest metrics.csv under it is read, so every
number in the JSON comes from a file the run wrote, beside the command that produced it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path


def test_metrics(metrics_csv: Path) -> dict[str, float]:
    """The last logged value of every `test/*` column, and the last training step."""
    out: dict[str, float] = {}
    with metrics_csv.open() as handle:
        for row in csv.DictReader(handle):
            for key, value in row.items():
                if value not in ("", None) and (key.startswith("test/") or key == "step"):
                    out[key] = float(value)
    if not any(k.startswith("test/") for k in out):
        raise SystemExit(f"{metrics_csv} holds no test/* metrics: did the run reach its test?")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--logs", type=Path, required=True, help="the run's CSVLogger save_dir")
    parser.add_argument("--note", default="", help="context for the numbers (machine load, ...)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    start = time.perf_counter()
    status = subprocess.run(command, check=False).returncode
    wall = time.perf_counter() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)  # CPU time is far less sensitive to other jobs
    if status:
        print(f"record_run: the command exited with {status}; nothing recorded", file=sys.stderr)
        return status
    found = sorted(args.logs.rglob("metrics.csv"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no metrics.csv under {args.logs}; is --logs the run's logger save_dir?")
    record = {
        "command": " ".join(command),
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(used.ru_utime + used.ru_stime, 1),
        "metrics": test_metrics(found[-1]),
        "metrics_csv": str(found[-1]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "note": args.note,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
