"""Does self-pretraining close the transformer's gap to a CNN at small labelled data? Per task (Fashion-MNIST,
PSORTb, IMDB) and labelled fraction: scratch vs self-pretrained (masked modelling on the task's own training
inputs) vs pretrained on the larger unlabelled set, each fine-tuned, beside the CNN baseline; every arm's
rate chosen on validation; pretraining + fine-tuning seconds reported for every arm.

    python -m benchmarks.bench_pretraining --quick --modalities psortb  # CPU
    python -m benchmarks.bench_pretraining --full --out results/pretraining_full  # for GPUs
    python -m benchmarks.bench_pretraining --smoke --modalities fashion_mnist     # seconds; used by the tests

Writes runs.jsonl (every fine-tuning run; rerunning resumes), pretrained/ (the pretraining exports and
their log, reused on resume; not committed), pretraining.json, pretraining.md and pretraining.png into --out.
"""

from __future__ import annotations

from benchmarks.evidence import sweep_main
from benchmarks.evidence.pretraining_bench import (
    KEY_FIELDS,
    PRETRAINING_BUDGETS,
    PRETRAINING_TASKS,
    run_pretraining_bench,
    summarise_pretraining_bench,
)
from benchmarks.evidence.pretraining_report import plot_pretraining, pretraining_table

BENCHMARK = sweep_main.SweepBenchmark(
    name="pretraining",
    stem="pretraining",
    modes=PRETRAINING_BUDGETS,
    modalities=tuple(PRETRAINING_TASKS),
    key_fields=KEY_FIELDS,
    run=run_pretraining_bench,
    summarise=summarise_pretraining_bench,
    table=pretraining_table,
    plot=plot_pretraining,
)


def main(argv: list[str] | None = None) -> int:
    return sweep_main.main(BENCHMARK, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
