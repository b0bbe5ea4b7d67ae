"""Learning curves on four modalities: the transformer against CNN and LSTM baselines.

    python -m benchmarks.bench_generalization --quick              # ≤ 20 minutes on 2 CPU cores
    python -m benchmarks.bench_generalization --standard           # the evidence: 2.7 h on 2 idle cores
    python -m benchmarks.bench_generalization --wide               # the same arms 128 wide: 6.2 h
    python -m benchmarks.bench_generalization --standard --lane 0/2 &  # two processes on two cores, then
    python -m benchmarks.bench_generalization --standard --lane 1/2    # once more without --lane: the report
    python -m benchmarks.bench_generalization --full --out results/full  # GPUs
    python -m benchmarks.bench_generalization --smoke --modalities text   # seconds; used by the tests

Writes runs.jsonl (every run; rerunning resumes), learning_curves.json, learning_curves.md and one
learning_curve_<modality>.png per modality into --out.
"""

from __future__ import annotations

from benchmarks.evidence import sweep_main
from benchmarks.evidence.arms import MODALITIES, SWEEPS
from benchmarks.evidence.learning_curve_report import markdown_table, plot_curves
from benchmarks.evidence.learning_curves import KEY_FIELDS, run_sweep, summarise

BENCHMARK = sweep_main.SweepBenchmark(
    name="generalization",
    stem="learning_curves",
    modes=SWEEPS,
    modalities=tuple(MODALITIES),
    key_fields=KEY_FIELDS,
    run=run_sweep,
    summarise=summarise,
    table=markdown_table,
    plot=plot_curves,
    lanes=True,
)


def main(argv: list[str] | None = None) -> int:
    return sweep_main.main(BENCHMARK, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
