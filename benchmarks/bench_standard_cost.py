"""What a learning-curve plan costs on an idle machine, priced over a sweep's logged runs.

    python -m benchmarks.bench_standard_cost              # the standard mode: ~15 minutes on 2 idle cores
    python -m benchmarks.bench_standard_cost --plan wide  # the 128-wide plan it replaced: ~25 minutes
    python -m benchmarks.bench_standard_cost --sweep results/generalization_wide \
        --out results/standard_cost/projected          # the standard plan priced over the wide runs
    python -m benchmarks.bench_standard_cost --lanes 1 --modalities image --out /tmp/cost

Times each (modality, arm) of the plan once at full data, `--lanes` processes side by side with one
thread each (as the sweep runs), then prices every run and pretraining in --sweep (default
results/generalization_<plan>/) at those costs (benchmarks.evidence.standard_cost): another log's runs
priced at this plan's timings say what the plan will cost before it has run. Run it with nothing else
on the machine: the load average around every timing is recorded. Writes timings.jsonl (rerunning
times only what is missing), cost.json and cost.md into --out (default results/standard_cost/<plan>/).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from benchmarks.evidence.arms import MODALITIES, PLANS, SWEEPS
from benchmarks.evidence.learning_curves import KEY_FIELDS as CURVE_FIELDS
from benchmarks.evidence.pretraining_bench import PRETRAIN_KEY_FIELDS
from benchmarks.evidence.rate_sweep import RunLog
from benchmarks.evidence.standard_cost import (
    TIMING_FIELDS,
    Job,
    jobs,
    markdown,
    median_load,
    project,
    time_job,
)

ROOT = Path(__file__).resolve().parents[1]


def timed_in_subprocess(job: Job, plan: str) -> dict[str, object]:
    """One timing in a fresh interpreter, as each run of a sweep lane starts (its data loader workers
    fork from it as they do there); the timing is the JSON on its last line of output."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.bench_standard_cost",
        "--plan",
        plan,
        "--job",
        job.modality,
        job.arm,
        str(job.lr),
    ]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    if done.returncode != 0:
        raise RuntimeError(f"timing {job} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    names = list(MODALITIES)
    parser.add_argument("--modalities", nargs="+", default=names, choices=names)
    parser.add_argument("--lanes", type=int, default=2, help="timings side by side, one thread each")
    parser.add_argument("--plan", choices=PLANS, default="standard", help="the learning-curve mode priced")
    parser.add_argument(
        "--sweep", type=Path, default=None, help="its log (default results/generalization_<plan>)"
    )
    parser.add_argument("--out", type=Path, default=None, help="default results/standard_cost/<plan>")
    parser.add_argument("--job", nargs=3, metavar=("MODALITY", "ARM", "LR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sweep = SWEEPS[args.plan]
    sweep_dir = args.sweep or ROOT / "results" / f"generalization_{args.plan}"
    out = args.out or ROOT / "results" / "standard_cost" / args.plan
    if args.job:  # one timing, in this process: what timed_in_subprocess runs
        modality, arm, lr = args.job
        print(json.dumps(time_job(ROOT, Job(modality=modality, arm=arm, lr=float(lr)), sweep)), flush=True)
        return 0
    log = RunLog(out / "timings.jsonl", TIMING_FIELDS)
    todo = [job for job in jobs(args.modalities, sweep) if log.get(job) is None]
    with ThreadPoolExecutor(args.lanes) as lanes:
        for timing in lanes.map(timed_in_subprocess, todo, [args.plan] * len(todo)):
            log.add(timing)
            print(timing, flush=True)
    timings = {(str(t["modality"]), str(t["arm"])): t for t in log.runs.values()}
    # Read as the sweep reads its logs: one record per run key, the last logged (a run redone on resume
    # is priced once).
    logged = RunLog(sweep_dir / "runs.jsonl", CURVE_FIELDS).runs.values()
    runs = [r for r in logged if r["modality"] in args.modalities]
    pretrainings = list(
        RunLog(sweep_dir / "pretrained" / "pretraining.jsonl", PRETRAIN_KEY_FIELDS).runs.values()
    )
    costs = project(sweep, timings, runs, pretrainings)
    table = markdown(costs, args.lanes)
    report = {
        "plan": args.plan,
        "sweep": str(sweep_dir.relative_to(ROOT) if sweep_dir.is_relative_to(ROOT) else sweep_dir),
        "lanes": args.lanes,
        "median_load_average": median_load(list(log.runs.values())),
        "modalities": [asdict(c) for c in costs],
    }
    (out / "cost.json").write_text(json.dumps(report, indent=1))
    (out / "cost.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
