"""Claim: information travels O(1) hops through attention but O(n) through recurrence (Vaswani et al.
2017, Table 1, "maximum path length"). Shown by the gradient that reaches the first token from the last
output, ||∂ y_N / ∂ x_1||, at initialisation and several lengths.

Recurrence multiplies one Jacobian per step, so the norm decays geometrically with n (Bengio et al. 1994;
Pascanu et al. 2013). Attention reaches x_1 in one hop per layer; at initialisation its softmax is nearly
uniform, so that hop carries weight ≈ 1/n: the norm should fall about linearly, not geometrically.
Computed in float64, which holds the recurrent gradient down to ~1e-300; where even that underflows, the
decays are compared up to the longest length both norms survive, and the table says where it stopped.

One seed at initialisation, computed exactly: a deterministic measurement, so its interval is the point.
The claim is an order (O(1) against O(n)), so the rule is stated on the two decays: supported when the
recurrent one exceeds attention's by MIN_CONTRAST and attention falls no faster than about 1/n; different
size when recurrence decays faster but attention faster than 1/n too; contradicted when recurrence decays
no faster than attention; inconclusive in between.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from benchmarks.evidence.models import Shape, count_parameters, matched_lstm
from benchmarks.evidence.report import ClaimResult, Judgement

CLAIM = "information path length: gradient from the last output to the first token"
ARTICLE = "O(1) hops (attention) vs O(n) (recurrence)"
MIN_CONTRAST = 10.0  # the recurrent decay must exceed attention's by this factor over the length range
# Attention at initialisation dilutes its one hop like 1/n (log-log slope -1); steeper than -1.25 is more.


@dataclass(frozen=True, kw_only=True)
class Settings:
    lengths: tuple[int, ...] = (64, 128, 256, 512, 1024)
    shape: Shape = field(default_factory=lambda: Shape(dim=32, depth=2, heads=2, positions="sinusoidal"))
    samples: int = 4  # random inputs (each with its own random output direction) averaged per length

    def __post_init__(self) -> None:
        if len(self.lengths) < 2 or list(self.lengths) != sorted(set(self.lengths)):
            raise ValueError(f"path_length lengths={self.lengths} must be at least two increasing lengths")


def first_token_gradient(
    backbone: nn.Module, length: int, samples: int, seed: int, device: torch.device
) -> float:
    """sqrt(E ||(∂ y_N/∂ x_1)ᵀ u||²) over random inputs x and unit-variance directions u, which equals the
    Frobenius norm of the Jacobian (Hutchinson's estimator); one backward pass serves all samples."""
    generator = torch.Generator().manual_seed(seed)
    dim = backbone.dim
    x = torch.randn(samples, length, dim, generator=generator, dtype=torch.float64).to(device)
    u = torch.randn(samples, dim, generator=generator, dtype=torch.float64).to(device)
    x.requires_grad_(True)
    (backbone(x)[:, -1] * u).sum().backward()
    return x.grad[:, 0].pow(2).sum(dim=-1).mean().sqrt().item()


def run(settings: Settings, seeds: Sequence[int], device: torch.device) -> ClaimResult:
    lengths, seed = settings.lengths, seeds[0]
    torch.manual_seed(seed)
    encoder = settings.shape.encoder(max(lengths)).double()
    backbones = {"transformer": encoder, "lstm": matched_lstm(encoder).double()}
    norms = {
        name: [first_token_gradient(b.to(device).eval(), n, settings.samples, seed, device) for n in lengths]
        for name, b in backbones.items()
    }
    measured, verdict, details = _summarise(lengths, norms)
    sizes = details["parameters_total"] = {name: count_parameters(b) for name, b in backbones.items()}
    measured += (
        f"; {sizes['transformer']:,} vs {sizes['lstm']:,} backbone params in total; one seed, deterministic: "
        "the interval is the point"
    )
    return ClaimResult.of("path_length", CLAIM, ARTICLE, measured, verdict, details)


def _summarise(lengths: Sequence[int], norms: dict[str, list[float]]) -> tuple[str, Judgement, dict]:
    """The measured text, the verdict and the details, from the norms of both models at every length."""
    # A norm below float64's range reads 0; decays are compared up to the longest length where both
    # norms are still representable.
    both = [i for i in range(len(lengths)) if norms["transformer"][i] > 0 and norms["lstm"][i] > 0]
    last = max(both, default=0)
    decay = {name: v[0] / v[last] if v[last] > 0 else math.nan for name, v in norms.items()}
    logs = {name: [math.log10(max(v, 1e-308)) for v in values] for name, values in norms.items()}
    slope = _fit_slope([math.log10(n) for n in lengths], logs["transformer"])
    lstm_rate = _fit_slope(lengths[: last + 1], logs["lstm"][: last + 1])
    contrast = decay["lstm"] / decay["transformer"]
    if last == 0:
        verdict = Judgement("inconclusive", "a norm is below float64's range from the second length on")
    elif contrast >= MIN_CONTRAST and slope >= -1.25:
        verdict = Judgement("supported", "recurrence decays geometrically, attention only like 1/n")
    elif contrast >= MIN_CONTRAST:
        verdict = Judgement("different size", "recurrence decays faster, but attention faster than 1/n too")
    elif contrast <= 1.0:
        verdict = Judgement("contradicted", "recurrence decays no faster than attention")
    else:
        verdict = Judgement("inconclusive", f"recurrence decays faster, by less than {MIN_CONTRAST:.0f}×")
    attention = norms["transformer"][0] / max(norms["transformer"][-1], 1e-308)
    measured = (
        f"n={lengths[0]}→{lengths[-1]}: attention ÷{attention:.3g} (log-log slope {slope:.2f}); "
        f"LSTM ÷{decay['lstm']:.3g} by n={lengths[last]} ({lstm_rate:.3f} decades per token)"
    )
    if last < len(lengths) - 1:
        measured += f", below float64's range at n={lengths[last + 1]}"
    details = {
        "lengths": list(lengths),
        "gradient_norm": norms,
        "compared_up_to": lengths[last],
        "decay": decay,
        "attention_loglog_slope": slope,
        "lstm_log10_per_token": lstm_rate,
    }
    return measured, verdict, details


def _fit_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ys against xs. Against log n, -1 means the norm falls like 1/n; of log10
    against n, the decades lost per token (a geometric decay)."""
    if len(xs) < 2:
        return math.nan
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
