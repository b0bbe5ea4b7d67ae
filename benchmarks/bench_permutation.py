"""The permutation test of Perceiver (Jaegle et al. 2021): one fixed pixel permutation drops ResNet-50 from
73.5% to 39.4% on ImageNet while the Perceiver is unchanged. Here one fixed permutation, the same in
training and test, of (a) the token order the backbone sees, in all four modalities, for the CNN and LSTM
baselines (the transformer with learned positions is invariant by construction, tested exactly), and
(b) the raw pixels and spectrogram cells before patching, for the transformer and the grid CNN; every
arm's rate chosen on validation, test accuracy with a 95% t interval over seeds.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_permutation --quick --out results/permutation
    python -m benchmarks.bench_permutation --full --out results/permutation_full                 # for GPUs
    python -m benchmarks.bench_permutation --smoke --modalities image  # seconds

Writes runs.jsonl (every run; rerunning resumes), permutation.json, permutation.md and permutation.png
into --out.
"""

from __future__ import annotations

from benchmarks.evidence import sweep_main
from benchmarks.evidence.permutation import (
    KEY_FIELDS,
    PERMUTATION_BUDGETS,
    PERMUTATION_TASKS,
    run_permutation_bench,
    summarise_permutation_bench,
)
from benchmarks.evidence.permutation_report import permutation_table, plot_permutation

BENCHMARK = sweep_main.SweepBenchmark(
    name="permutation",
    stem="permutation",
    modes=PERMUTATION_BUDGETS,
    modalities=tuple(PERMUTATION_TASKS),
    key_fields=KEY_FIELDS,
    run=run_permutation_bench,
    summarise=summarise_permutation_bench,
    table=permutation_table,
    plot=plot_permutation,
)


def main(argv: list[str] | None = None) -> int:
    return sweep_main.main(BENCHMARK, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
