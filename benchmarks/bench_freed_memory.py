"""What glibc's handing freed memory back to the kernel costs a CPU training run, and what keeping it saves
(tabrasa.training.freed_memory): one arm of the learning curves timed as `bench_arm_cost` times it, in two
fresh processes, one with glibc's defaults and one with `keep_freed_memory()`.

    python -m benchmarks.bench_freed_memory --modality audio --arm spectrogram_cnn

Each process reports its median training step (at the largest fraction, whose epoch holds all the steps)
and its validation pass, and the CPU seconds (user and kernel)
and minor page faults of its whole fit, from getrusage. A step timed beside other work is slower than on
an idle core; the kernel seconds and the page faults do not depend on that. Writes
results/freed_memory/MODALITY_ARM.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.bench_arm_cost import arm_timing_parser, measure
from benchmarks.bench_common import command_line, setup, write_json
from benchmarks.curves.plan import MODALITIES
from tabrasa.training.freed_memory import keep_freed_memory

SETTINGS = ("glibc_default", "keep_freed_memory")


def timed_fit(modality: str, arm: str, steps: int, threads: int, keep: bool) -> dict[str, Any]:
    """One process's numbers: its step and validation seconds and its fit's rusage."""
    environment = setup(threads)
    kept = keep_freed_memory() if keep else False
    before = resource.getrusage(resource.RUSAGE_SELF)
    plan = MODALITIES[modality]
    timing = measure(plan, arm, steps, fraction=plan.protocol.fractions[-1])  # an epoch holds the steps
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "kept": kept,
        "step_seconds": round(timing["step_seconds"], 3),
        "validation_seconds": round(timing["validation_seconds"], 2),
        "steps_timed": timing["steps_timed"],
        "user_seconds": round(after.ru_utime - before.ru_utime, 1),
        "kernel_seconds": round(after.ru_stime - before.ru_stime, 1),
        "minor_page_faults": after.ru_minflt - before.ru_minflt,
        "environment": environment,
    }


def in_fresh_process(args: argparse.Namespace, setting: str) -> dict[str, Any]:
    """`timed_fit` in a new interpreter: mallopt settings last for a process's life."""
    child = [
        sys.executable, "-m", "benchmarks.bench_freed_memory", "--modality", args.modality, "--arm", args.arm,
        "--steps", str(args.steps), "--threads", str(args.threads), "--child", setting,
    ]  # fmt: skip
    done = subprocess.run(child, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{setting} process failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = arm_timing_parser(__doc__)
    p.add_argument("--out", type=Path, default=None, help="default results/freed_memory/MODALITY_ARM.json")
    p.add_argument("--child", choices=SETTINGS, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    MODALITIES[args.modality].arm(args.arm)  # an unknown arm stops here, with the modality's arms named
    if args.child is not None:
        keep = args.child == "keep_freed_memory"
        print(json.dumps(timed_fit(args.modality, args.arm, args.steps, args.threads, keep)))
        return 0
    runs = {setting: in_fresh_process(args, setting) for setting in SETTINGS}
    default, kept = runs["glibc_default"], runs["keep_freed_memory"]
    result = {
        "command": command_line("benchmarks.bench_freed_memory", argv),
        "modality": args.modality,
        "arm": args.arm,
        **runs,
        "cpu_seconds_saved_fraction": round(
            1
            - (kept["user_seconds"] + kept["kernel_seconds"])
            / (default["user_seconds"] + default["kernel_seconds"]),
            3,
        ),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
    }
    out = args.out or Path("results/freed_memory") / f"{args.modality}_{args.arm}.json"
    write_json(out, result)
    for setting in SETTINGS:
        run = runs[setting]
        print(
            f"{setting}: step {run['step_seconds']:.2f} s, validation {run['validation_seconds']:.1f} s, "
            f"user {run['user_seconds']} s, kernel {run['kernel_seconds']} s, "
            f"{run['minor_page_faults']:,} page faults"
        )
    print(f"CPU seconds saved: {result['cpu_seconds_saved_fraction']:.1%} → {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
