"""The rate of an arm's permuted runs: its curve's chosen rate at the largest fraction, lowered only when the
first seed's permuted run at that rate did not train.

The permutation test asks what an arm loses when its prior has nothing to hold on to. A permuted run that
stays at a constant guess answers another question, whether the rate tuned on ordered inputs still
optimises at all: the spectrogram CNN at 9e-3 (its 7,945-clip choice, with 2.7e-2 diverged) scored 3.9% on
permuted validation, where a constant guess gets 2.9% (35 balanced words) and every other audio arm kept 29
to 38%. Reading that as the prior's loss would credit the prior with an optimiser failure.

So the first seed decides, on validation only, as in the rate sweep: a first-seed permuted run whose best
validation accuracy stays below the validation split's majority share + `UNTRAINED_MARGIN` of the rest (the
rule the claims table voids an untrained arm by) did not train, and the permuted runs move one
`rate_step` down. That one step is the control the question needs: if the lower rate does not train
either, the rate was not the cause, the failure is what the shuffle takes from the arm, and the rate with
the better validation of the two stands (a further step would cost another full-data run to ask the same
question again). Every seed's permuted run then trains at the rate the first seed settled. The runs left
behind stay in runs.jsonl, and the report names them.

The spectrogram CNN settled so: 3e-3 did not train either (4.6% on validation after its 30 epochs), so its
permuted runs stay at 3e-3 and it loses nearly all it had. A likely reason, not measured here: its 3×3
features end in a global average, which keeps what the cells hold and loses where they were, and after a
cell shuffle where they were is what tells one word from another.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from benchmarks.curves.plan import Arm, ModalityPlan
from benchmarks.curves.rates import snap
from benchmarks.evidence.report import untrained_below

FALLBACKS = 1  # steps down the rate grid a permuted run that did not train may take
BACKFILL = "python -m benchmarks.curves.validation_majority results/curves/runs.jsonl"


def did_not_train(row: dict[str, Any]) -> bool:
    """Whether the run's best validation accuracy stayed within the margin of a constant guess."""
    majority = row.get("val_majority")
    if majority is None:
        run = f"{row['modality']}/{row['arm']} f={row['fraction']} lr={row['lr']} seed={row['seed']}"
        raise ValueError(
            f"run {run} has no val_majority (it was logged before runs recorded it), so whether it "
            f"trained cannot be judged; add it with `{BACKFILL}` while no sweep writes the log"
        )
    return float(row["val_acc"]) < untrained_below(float(majority))


class PermutationRate(NamedTuple):
    rate: float  # the rate the permuted runs train at now
    decided: bool  # the first seed's permuted run at `rate` has run (trained, or no fall-back is left)
    untrained: tuple[float, ...] = ()  # the rates, highest first, whose first-seed permuted run did not train


def first_seed_permuted(
    plan: ModalityPlan, arm: Arm, rows: Iterable[dict[str, Any]]
) -> dict[float, dict[str, Any]]:
    """lr → the arm's first-seed permuted run at its largest fraction: the runs that decide its rate."""
    largest = arm.fractions_of(plan.protocol)[-1]
    return {
        float(r["lr"]): r
        for r in rows
        if r["modality"] == plan.name and r["arm"] == arm.name and float(r["fraction"]) == largest
        and int(r["seed"]) == plan.protocol.seeds[0] and r.get("permuted")
    }  # fmt: skip


def permutation_rate(
    plan: ModalityPlan, arm: Arm, chosen: float, rows: Iterable[dict[str, Any]]
) -> PermutationRate:
    """The arm's permuted rate from `chosen` (its curve's rate at the largest fraction) and the log's rows."""
    protocol = plan.protocol
    first_seed = first_seed_permuted(plan, arm, rows)
    fallbacks = min(FALLBACKS, protocol.bracket)  # a protocol that never extends its rates (smoke) has none
    rate, untrained = chosen, []
    while (row := first_seed.get(rate)) is not None:
        if not did_not_train(row):
            return PermutationRate(rate, True, tuple(untrained))
        untrained.append(rate)
        if len(untrained) > fallbacks:  # not the rate: the better on validation stands, reported untrained
            best = max(untrained, key=lambda r: (float(first_seed[r]["val_acc"]), -r))
            return PermutationRate(best, True, tuple(untrained))
        rate = snap(rate / protocol.rate_step, protocol)
    return PermutationRate(rate, False, tuple(untrained))
