"""Verdicts and the claims table: every figure compared with the article's, by one stated rule.

The rule (`judge`): the article states a range [low, high] for a quantity whose "no effect" value is
`null` (0 for differences, 1 for ratios).
- supported: the measured value lies in the range widened by a factor of TOLERANCE either way;
- partly: the effect points the article's way beyond the seed spread, but its size is outside that band;
- not supported: no effect beyond the seed spread, or an effect the other way.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Verdict = Literal["supported", "partly", "not supported"]

TOLERANCE = 1.25  # small models on a CPU are not the articles' setting: allow ±25% around their range


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str


@dataclass
class ClaimResult:
    """One row of the table. `details` holds every number behind `measured` (per seed, per setting)."""

    key: str
    claim: str
    article: str
    measured: str
    verdict: Verdict
    reason: str
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Spread:
    """Mean and half-range over seeds (with two seeds, half the gap between them)."""

    mean: float
    half_range: float
    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            raise ValueError("Spread.of needs at least one value (one per seed)")
        return cls(statistics.fmean(values), (max(values) - min(values)) / 2, tuple(values))

    def format(self, digits: int = 1, unit: str = "") -> str:
        return f"{self.mean:.{digits}f}{unit} ± {self.half_range:.{digits}f}{unit}"


def judge(measured: float, low: float, high: float, null: float, spread: float = 0.0) -> Judgement:
    """Apply the module's rule to one measured figure (in the article's unit)."""
    if low > high or (low - null) * (high - null) <= 0:
        raise ValueError(f"judge: the article's range [{low}, {high}] must lie on one side of null={null}")
    direction = 1.0 if low > null else -1.0
    effect = (measured - null) * direction
    band_low, band_high = sorted((low / TOLERANCE, high * TOLERANCE))
    if effect <= spread:
        where = "the other way" if effect < -spread else f"within the seed spread (±{spread:.3g}) of none"
        return Judgement("not supported", f"the effect is {where}")
    if band_low <= measured <= band_high:
        return Judgement("supported", f"within the article's range (±{TOLERANCE - 1:.0%})")
    size = "larger" if abs(measured - null) > abs(high - null) else "smaller"
    return Judgement("partly", f"right direction, but {size} than the article's range")


def combine(judgements: Sequence[Judgement], labels: Sequence[str]) -> Judgement:
    """One verdict for a claim measured at several settings: unanimous, or `partly` naming the split."""
    verdicts = {j.verdict for j in judgements}
    if len(verdicts) == 1:
        return Judgement(judgements[0].verdict, judgements[0].reason)
    split = "; ".join(f"{label}: {j.verdict}" for label, j in zip(labels, judgements, strict=True))
    return Judgement("partly", f"depends on the setting ({split})")


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
