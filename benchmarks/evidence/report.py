"""Verdicts and the claims table: every figure compared with the article's, by one stated rule.

The article states a range [low, high] (a single figure is the range [x, x]) for a quantity whose "no
effect" value is `null` (0 for differences, 1 for ratios). The measured figure is a 95% interval: for
accuracies and their differences, a paired hierarchical bootstrap over seeds and test examples
(`intervals.hierarchical_bootstrap`); of the mean over seeds for other quantities (Student t with n − 1
degrees of freedom, `intervals.mean_interval`); of a median of interleaved timing rounds
(`claims.paired_timing`); or the point itself for one seed or a deterministic measurement (the row says
which). `judge` applies, in this order:
- supported: the interval overlaps the article's range and excludes no effect;
- inconclusive: the interval includes no effect (whether or not it also overlaps the range: an interval
  that admits no effect at all cannot support an effect of the article's size);
- contradicted: the interval excludes the article's direction: none of it lies beyond no effect on the
  article's side (an interval exactly at no effect counts: it excludes every effect the article names);
- different size: the whole interval lies beyond no effect on the article's side, but misses the range.

Before any of that, `untrained`: an arm the claim compares whose mean accuracy ends below chance +
`UNTRAINED_MARGIN` · (1 − chance) never trained, and the row's verdict is "no verdict: <arm> never
trained"; nothing else is claimed. `combine` gives a claim measured at several settings one verdict: the
settings' verdict when they agree; "no verdict" when any setting has one (an arm that never trained at
one setting voids the row); otherwise "mixed", the reason naming each setting's verdict.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from benchmarks.evidence.intervals import RESAMPLES

Verdict = Literal["supported", "contradicted", "different size", "inconclusive", "mixed", "no verdict"]

UNTRAINED_MARGIN = 0.1  # of the distance from chance to perfect: less than this above chance is no learning


class Bounds(Protocol):
    """A 95% interval: `intervals.Interval`, `intervals.Bootstrap`, `claims.paired_timing.MedianInterval`."""

    @property
    def low(self) -> float: ...

    @property
    def high(self) -> float: ...


class Estimate(Bounds, Protocol):
    """A 95% interval with its point (`mean`) and the number of seeds behind it (`n`)."""

    @property
    def mean(self) -> float: ...

    @property
    def n(self) -> int: ...


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str


@dataclass
class ClaimResult:
    """One row of the table. `details` holds every number behind `measured` (per seed, per setting, and
    each arm's learning-rate sweep)."""

    key: str
    claim: str
    article: str
    measured: str
    verdict: Verdict
    reason: str
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls, key: str, claim: str, article: str, measured: str, judgement: Judgement, details: dict[str, Any]
    ) -> ClaimResult:
        return cls(key, claim, article, measured, judgement.verdict, judgement.reason, details=details)


def _show(value: float) -> str:
    return f"{value:.3g}"


def span(interval: Estimate, digits: int = 1, unit: str = "", sign: str = "", scale: float = 1.0) -> str:
    """ "mean [low, high]" of a seed interval (times `scale`), or the mean alone for one seed (`basis` says
    which). `sign="+"` signs every figure."""

    def show(value: float) -> str:
        return f"{scale * value:{sign}.{digits}f}"

    if interval.n < 2:
        return f"{show(interval.mean)}{unit}"
    return f"{show(interval.mean)}{unit} [{show(interval.low)}, {show(interval.high)}]"


def basis(seeds: int) -> str:
    """What the t-intervals of a row are, for its measured text."""
    if seeds < 2:
        return "one seed: each interval is its point"
    return f"95% t-intervals over {seeds} seeds"


def bootstrap_basis(seeds: int, examples: int) -> str:
    """What the accuracy intervals of a row are, for its measured text."""
    return (
        f"95% paired hierarchical bootstrap intervals ({RESAMPLES:,} resamples of {seeds} seeds, then of "
        f"the {examples:,} test examples within each)"
    )


def judge(measured: Bounds, low: float, high: float, null: float) -> Judgement:
    """The module's four-way rule for one measured interval (in the article's unit)."""
    if low > high or (low - null) * (high - null) <= 0:
        raise ValueError(f"judge: the article's range [{low}, {high}] must lie on one side of null={null}")
    if measured.low > measured.high:
        raise ValueError(f"judge: the interval [{measured.low}, {measured.high}] is reversed")
    interval = f"[{_show(measured.low)}, {_show(measured.high)}]"
    direction = 1.0 if low > null else -1.0
    # The interval's ends as effects in the article's direction: positive is the article's way.
    near, far = sorted(((measured.low - null) * direction, (measured.high - null) * direction))
    overlaps = measured.high >= low and measured.low <= high
    if overlaps and near > 0:
        return Judgement("supported", f"the interval {interval} overlaps the article's range")
    if overlaps:
        # Overlapping the range is not enough: an interval that also admits no effect supports nothing.
        return Judgement(
            "inconclusive",
            f"the interval {interval} overlaps the article's range but includes no effect ({_show(null)})",
        )
    if far <= 0:
        against = f"the interval {interval} lies at or beyond no effect ({_show(null)}), against the article"
        return Judgement("contradicted", against)
    if near > 0:
        size = "larger" if near > max((low - null) * direction, (high - null) * direction) else "smaller"
        return Judgement("different size", f"right direction, but the interval {interval} is {size}")
    return Judgement(
        "inconclusive", f"the interval {interval} includes no effect ({_show(null)}) and misses the range"
    )


def untrained_below(chance: float) -> float:
    """The accuracy an arm must reach to count as trained: chance + `UNTRAINED_MARGIN` of the rest."""
    return chance + UNTRAINED_MARGIN * (1 - chance)


def untrained(accuracies: Mapping[str, Sequence[float]], chance: float) -> Judgement | None:
    """ "no verdict" naming every arm whose mean accuracy stays within the margin of chance, else None."""
    if not 0.0 <= chance < 1.0:
        raise ValueError(f"untrained: chance={chance} must be an accuracy in [0, 1)")
    floor = untrained_below(chance)
    stuck = [arm for arm, values in accuracies.items() if statistics.fmean(values) < floor]
    if not stuck:
        return None
    return Judgement(
        "no verdict",
        f"{' and '.join(stuck)} never trained (mean accuracy below {100 * floor:.1f}%: chance "
        f"{100 * chance:.1f}% + {UNTRAINED_MARGIN:.0%} of the rest)",
    )


def combine(judgements: Sequence[Judgement], labels: Sequence[str]) -> Judgement:
    """One verdict for a claim measured at several settings, by the module's rule."""
    if len(judgements) != len(labels) or not judgements:
        raise ValueError(f"combine: {len(judgements)} judgements for {len(labels)} labels")
    pairs = list(zip(labels, judgements, strict=True))
    void = [f"{label}: {j.reason}" for label, j in pairs if j.verdict == "no verdict"]
    if void:
        return Judgement("no verdict", "; ".join(void))
    if len(judgements) == 1:
        return judgements[0]
    verdicts = {j.verdict for j in judgements}
    if len(verdicts) == 1:
        return Judgement(judgements[0].verdict, "; ".join(f"{label}: {j.reason}" for label, j in pairs))
    return Judgement("mixed", "; ".join(f"{label} {j.verdict}" for label, j in pairs))


HEADER = ("claim", "article's figure", "measured", "verdict")


def markdown_table(results: Sequence[ClaimResult]) -> str:
    rows = [HEADER, ("---",) * 4]
    for r in results:
        rows.append((r.claim, r.article, r.measured, f"**{r.verdict}**: {r.reason}"))
    return "\n".join("| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in rows)


def write(results: Sequence[ClaimResult], out_dir: Path, settings: dict[str, Any]) -> tuple[Path, Path]:
    """results/claims.json (every number, with the settings that produced it) and results/claims.md."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "claims.json", out_dir / "claims.md"
    payload = {"settings": settings, "claims": [asdict(r) for r in results]}
    json_path.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    md_path.write_text(markdown_table(results) + "\n")
    return json_path, md_path
