"""The command line of the resumable sweeps (`python -m benchmarks.bench_generalization`, `bench_transfer`):
one flag per mode, the modalities, an output folder; run what is missing, then write the records as JSON,
the table as markdown, and the plots."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RateProtocol, RunLog

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, kw_only=True)
class SweepBenchmark:
    """name: default output folder results/<name>_<mode>. stem: <stem>.json and <stem>.md. run trains what
    is missing; summarise reads records from the log; table and plot render them. lanes: run takes a
    `lane=` (benchmarks.evidence.lanes) and the command line offers --lane."""

    name: str
    stem: str
    modes: Mapping[str, RateProtocol]
    modalities: Sequence[str]
    key_fields: tuple[str, ...]
    run: Callable[..., None]  # (root, modalities, budget, log), with lanes also lane=
    summarise: Callable[[RunLog, list[str], Any], list[Any]]
    table: Callable[[list[Any]], str]
    plot: Callable[[list[Any], Path], Path | list[Path]]
    lanes: bool = False

    def __post_init__(self) -> None:
        if "quick" not in self.modes:
            raise ValueError(
                f"SweepBenchmark {self.name!r}: modes={list(self.modes)} needs 'quick', the default"
            )


def lane_arg(text: str) -> Lane:
    try:
        return Lane.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def main(benchmark: SweepBenchmark, description: str | None, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group()
    for name in benchmark.modes:
        mode.add_argument(f"--{name}", dest="mode", action="store_const", const=name)
    names = list(benchmark.modalities)
    parser.add_argument("--modalities", nargs="+", default=names, choices=names)
    parser.add_argument(
        "--out", type=Path, default=None, help=f"output folder (default results/{benchmark.name}_<mode>)"
    )
    parser.add_argument(
        "--report-only", action="store_true", help="write the report from the log as it is, training nothing"
    )
    if benchmark.lanes:
        parser.add_argument(
            "--lane", type=lane_arg, default=Lane(), metavar="I/N",
            help="run the I-th of N shares of the arms (N processes side by side), then once more without",
        )  # fmt: skip
    args = parser.parse_args(argv)
    mode_name = args.mode or "quick"
    budget = benchmark.modes[mode_name]
    out = args.out or ROOT / "results" / f"{benchmark.name}_{mode_name}"
    out.mkdir(parents=True, exist_ok=True)
    log = RunLog(out / "runs.jsonl", benchmark.key_fields)
    if args.report_only:
        pass  # a sweep still running elsewhere, or one stopped part-way: report what it has logged
    elif benchmark.lanes:
        benchmark.run(ROOT, args.modalities, budget, log, lane=args.lane)
        if args.lane.shared:  # the other lanes' runs are not in this log: the report waits for them all
            print(f"lane {args.lane.index}/{args.lane.count} done; when every lane is, rerun without --lane")
            return 0
    else:
        benchmark.run(ROOT, args.modalities, budget, log)
    records = benchmark.summarise(log, args.modalities, budget)
    (out / f"{benchmark.stem}.json").write_text(json.dumps([asdict(r) for r in records], indent=1))
    table = benchmark.table(records)
    (out / f"{benchmark.stem}.md").write_text(table)
    plots = benchmark.plot(records, out)
    print(table)
    shown = [
        p.relative_to(ROOT) if p.is_relative_to(ROOT) else p
        for p in ([plots] if isinstance(plots, Path) else plots)
    ]
    print("plots:", ", ".join(map(str, shown)))
    return 0
