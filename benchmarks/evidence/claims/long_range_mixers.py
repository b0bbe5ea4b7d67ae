"""Claim: at long range a state-space model beats attention (S4 on LRA ListOps 59.6% against the
Transformer's 36.4%, Gu et al. 2022), asked of the mixers of configs/backbone/ on the long-range claim's task.

The task, curriculum, budget and protocol are the long-range claim's (`long_range.Settings`): the answer
sits in the first tokens and is read at the last, the length grows 64 → 256 → 1,024 in one run, and every
arm sweeps its own learning rate on validation. The arms are the transformer of that claim and, in its
place, each mixer at the same width, its depth (or feed-forward ratio) chosen to bring its whole parameter
count closest to the transformer's (within ±20%, checked): Mamba (bidirectional, as configs/backbone/
mamba.yaml), GAU (quadratic, rotary positions) and continuous depth (one weight-tied block, midpoint in 2
steps, sinusoidal positions as the transformer). The verdict is Mamba's gap to the transformer at the
claim's length; the GAU and ODE arms are reported beside it, with theirs. The claim is long (Mamba's arm is
about an hour on this CPU), so with `bench_claims --run-cache DIR` each finished run is kept and a killed
run resumes per run (`run_cache`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from benchmarks.evidence.claims.arm_sweep import ArmRuns, fit_arm
from benchmarks.evidence.claims.long_range import Settings as LongRangeSettings
from benchmarks.evidence.claims.run_cache import RunCache
from benchmarks.evidence.intervals import hierarchical_bootstrap
from benchmarks.evidence.models import count_parameters
from benchmarks.evidence.probe import ProbeModel
from benchmarks.evidence.report import ClaimResult, bootstrap_basis, judge, span, untrained
from tabrasa.backbone import GAUEncoder, Mamba, MambaConfig, ODEEncoder
from tabrasa.backbone.gau import GAUConfig
from tabrasa.backbone.ode_depth import ODEConfig

CLAIM = "long-range dependency at N=1,024: a state-space model (Mamba) vs attention of equal size"
ARTICLE = "+23.2 points (S4 59.6% vs Transformer 36.4%, LRA ListOps)"
ARTICLE_GAP = 59.6 - 36.4
MIXERS = ("Mamba", "GAU", "ODE")
SIZE_TOLERANCE = 0.2  # the ±20% parameter match of every other comparison


@dataclass(frozen=True, kw_only=True)
class Settings(LongRangeSettings):
    """The long-range claim's settings (its LSTM forget bias is unused here). mixers: the arms beside the
    transformer, any of MIXERS; Mamba is the one judged."""

    mixers: tuple[str, ...] = MIXERS

    @classmethod
    def sharing(cls, base: LongRangeSettings, **overrides: object) -> Settings:
        """These settings with every field of the long-range claim's `base`: one task, curriculum and
        budget for both claims."""
        shared = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
        return cls(**(shared | overrides))

    def __post_init__(self) -> None:
        super().__post_init__()
        unknown = sorted(set(self.mixers) - set(MIXERS))
        if unknown or "Mamba" not in self.mixers:
            raise ValueError(f"long_range_mixers mixers={self.mixers}: choose among {MIXERS}, Mamba included")


def _candidates(name: str, dim: int, heads: int, max_len: int) -> list[Callable[[], nn.Module]]:
    """The sizes a mixer may take at width `dim`, smallest first."""
    if name == "Mamba":
        return [lambda d=d: Mamba(MambaConfig(dim=dim, depth=d, dropout=0.0)) for d in range(1, 9)]
    if name == "GAU":
        return [
            lambda d=d: GAUEncoder(GAUConfig(dim=dim, depth=d, qk_dim=dim, max_len=max_len))
            for d in range(1, 13)
        ]
    return [
        lambda r=r: ODEEncoder(
            ODEConfig(dim=dim, heads=heads, mlp_ratio=float(r), positions="sinusoidal", max_len=max_len)
        )
        for r in range(1, 17)
    ]


def matched_mixer(name: str, target: int, dim: int, heads: int, max_len: int) -> Callable[[], nn.Module]:
    """The builder of `name` whose backbone's parameter count is closest to `target`; a ValueError when even
    that one is more than SIZE_TOLERANCE away (no size of it is comparable)."""
    builds = _candidates(name, dim, heads, max_len)
    counts = [count_parameters(build()) for build in builds]
    best = min(range(len(builds)), key=lambda i: abs(counts[i] - target))
    if abs(counts[best] - target) > SIZE_TOLERANCE * target:
        raise ValueError(
            f"long_range_mixers: no {name} of width {dim} comes within {SIZE_TOLERANCE:.0%} of the "
            f"transformer's {target:,} parameters (closest {counts[best]:,}); change the claim's shape.dim"
        )
    return builds[best]


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    task, shape, chance = settings.task, settings.shape, 1 / settings.task.classes
    encoder_size = count_parameters(shape.encoder(task.length))

    def probe(backbone: Callable[[], nn.Module]) -> Callable[[], ProbeModel]:
        return lambda: ProbeModel(backbone(), task.vocab_size, task.classes)

    builds = {"transformer": probe(lambda: shape.encoder(task.length))}
    for name in settings.mixers:
        builds[name] = probe(matched_mixer(name, encoder_size, shape.dim, shape.heads, task.length))
    arms: dict[str, ArmRuns] = {
        name: fit_arm(
            build,
            task,
            settings.train,
            seeds,
            device,
            settings.rates,
            curriculum=settings.stages(),
            cache=RunCache.for_arm("long_range_mixers", name, settings, device),
        )
        for name, build in builds.items()
    }
    sizes = {name: count_parameters(build()) for name, build in builds.items()}
    correct = {name: arm.correct for name, arm in arms.items()}
    accuracy = {name: hierarchical_bootstrap(correct, lambda a, k=name: a[k]) for name in arms}
    gaps = {
        name: hierarchical_bootstrap(correct, lambda a, k=name: 100 * (a[k] - a["transformer"]))
        for name in settings.mixers
    }
    seed_means = {name: c.mean(axis=1).tolist() for name, c in correct.items()}
    verdict = untrained({k: seed_means[k] for k in ("transformer", "Mamba")}, chance) or judge(
        gaps["Mamba"], ARTICLE_GAP, ARTICLE_GAP, null=0.0
    )
    lengths = settings.lengths
    stages = "; ".join(
        f"{name} "
        + " → ".join(
            f"{100 * np.mean(arm.stage_correct(i) if i < len(lengths) - 1 else arm.correct):.1f}%"
            for i in range(len(lengths))
        )
        for name, arm in arms.items()
    )
    described = "; ".join(
        f"{name} {span(accuracy[name], 1, '%', scale=100)} at lr {arm.choice.lr:g}"
        for name, arm in arms.items()
    )
    others = ", ".join(f"{name} {span(gaps[name], 1, ' points', sign='+')}" for name in settings.mixers[1:])
    steps = "+".join(str(s) for _, s in settings.curriculum) + f"+{settings.train.steps}"
    measured = (
        f"Mamba − transformer {span(gaps['Mamba'], 1, ' points', sign='+')}"
        + (f" ({others} against the transformer)" if others else "")
        + f"; {described}; every arm on the curriculum N={'→'.join(f'{n:,}' for n in lengths)}, {steps} = "
        f"{arms['transformer'].steps:,} steps of {settings.train.batch}; test accuracy at each stage's end: "
        f"{stages}; chance {100 * chance:.0f}%; params in total: "
        + ", ".join(f"{name} {size:,}" for name, size in sizes.items())
        + f"; {bootstrap_basis(len(seeds), arms['transformer'].correct.shape[1])}"
    )
    details = {
        "arms": {name: arm.details() for name, arm in arms.items()},
        "lengths": lengths,
        "gap_points_vs_transformer": {k: [g.mean, g.low, g.high] for k, g in gaps.items()},
        "accuracy": {k: [a.mean, a.low, a.high] for k, a in accuracy.items()},
        "accuracy_by_seed": seed_means,
        "parameters_total": sizes,
    }
    return ClaimResult.of("long_range_mixers", CLAIM, ARTICLE, measured, verdict, details)
