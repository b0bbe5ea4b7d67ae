"""Claim: separate query, key and value projections give about 40% more capacity than one shared one.

Capacity, operationally: how many random key→label pairs (`RandomPairsTask`: a fixed table of random
8-token keys with random labels, nothing to generalise) a model recalls after the same number of steps.
The shared model ties q = k = v through `SharedQKV` (one D→D projection instead of three), so it also has
2·D² fewer parameters per block; both counts are reported. Both arms get the same steps and batch. The
gain is the ratio of the mean counts, with its paired hierarchical bootstrap interval over seeds and the
table's entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from benchmarks.evidence.claims.arm_sweep import RATES, ArmRuns, choose_rate, final_validation
from benchmarks.evidence.intervals import hierarchical_bootstrap
from benchmarks.evidence.models import Shape, count_parameters
from benchmarks.evidence.probe import ProbeModel
from benchmarks.evidence.report import ClaimResult, bootstrap_basis, judge, span, untrained
from benchmarks.evidence.synthetic_tasks import RandomPairsTask
from benchmarks.evidence.synthetic_training import History, TrainConfig, train
from benchmarks.evidence.tied_qkv import tie_qkv

CLAIM = "separate Q/K/V projections vs one shared projection: capacity"
ARTICLE = "about +40% capacity"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """train: both arms' budget (its lr is replaced by each arm's chosen rate)."""

    task: RandomPairsTask = field(default_factory=lambda: RandomPairsTask(size=2048))
    shape: Shape = field(default_factory=lambda: Shape(dim=32, depth=2, heads=4))
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=600, batch=128))
    rates: tuple[float, ...] = RATES


def _model(settings: Settings, kind: str) -> ProbeModel:
    encoder = settings.shape.encoder(settings.task.length)
    backbone = tie_qkv(encoder) if kind == "shared" else encoder
    return ProbeModel(backbone, settings.task.vocab_size, settings.task.classes)


def _arm(settings: Settings, kind: str, seeds: Sequence[int], device: torch.device) -> ArmRuns:
    """The rate is chosen on a second random table of the same size (`validation`), the one measured is
    never seen by the choice: memorising a table has no held-out split of its own."""
    test, validation = settings.task, replace(settings.task, seed=settings.task.seed + 1)

    def fit(table: RandomPairsTask, lr: float, seed: int) -> History:
        torch.manual_seed(seed)
        # Evaluated on the training table itself: memorisation is the quantity, not generalisation.
        config = replace(settings.train, lr=lr)
        return train(_model(settings, kind), table, config, seed, device, [table.table], [table.table])

    choice = choose_rate(lambda lr: fit(validation, lr, seeds[0]), settings.rates, final_validation)
    runs = tuple(fit(test, choice.lr, seed) for seed in seeds)
    return ArmRuns(choice, runs, settings.train.steps, settings.train.batch)


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task = settings.task
    arms = {kind: _arm(settings, kind, seeds, device) for kind in ("separate", "shared")}
    sizes = {kind: count_parameters(_model(settings, kind)) for kind in arms}
    correct = {kind: arm.correct for kind, arm in arms.items()}  # (seeds, table entries)
    # A count of at least one pair below: the ratio stays finite where the shared arm recalls nothing.
    gain = hierarchical_bootstrap(
        correct, lambda a: 100 * (a["separate"] / np.maximum(a["shared"], 1 / task.size) - 1)
    )
    recalled = {kind: hierarchical_bootstrap(correct, lambda a, k=kind: task.size * a[k]) for kind in arms}
    verdict = untrained({k: a.test for k, a in arms.items()}, chance=1 / task.classes) or judge(
        gain, 40.0, 40.0, null=0.0
    )
    counts = ", ".join(f"{kind} {span(recalled[kind], 0)} at lr {arms[kind].choice.lr:g}" for kind in arms)
    measured = (
        f"{span(gain, 1, '%', sign='+')} more pairs memorised ({counts}, of {task.size}; "
        f"{settings.train.steps} steps of {settings.train.batch} in both arms; "
        f"{sizes['separate']:,} vs {sizes['shared']:,} params in total; "
        f"{bootstrap_basis(len(seeds), task.size)})"
    )
    details = {
        "arms": {kind: arm.details() for kind, arm in arms.items()},
        "pairs_recalled": {kind: [task.size * acc for acc in arm.test] for kind, arm in arms.items()},
        "gain_percent": [gain.mean, gain.low, gain.high],
        "parameters_total": sizes,
    }
    return ClaimResult.of("shared_qkv", CLAIM, ARTICLE, measured, verdict, details)
