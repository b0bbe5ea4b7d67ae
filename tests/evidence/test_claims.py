"""bench_claims.py end to end on a tiny slice (--smoke), plus the pieces its verdicts rest on."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tabrasa.backbone.attention import MultiHeadAttention
from tabrasa.evidence.claims import CLAIMS
from tabrasa.evidence.models import Shape, block_parameters, count_parameters, matched_lstm
from tabrasa.evidence.presets import PRESETS, SEEDS
from tabrasa.evidence.report import Spread, judge
from tabrasa.evidence.tied_qkv import SharedQKV, tie_qkv

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = {"supported", "partly", "not supported"}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("claims")
    done = subprocess.run(
        [sys.executable, "scripts/bench_claims.py", "--smoke", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / "claims.md").read_text().startswith("| claim | article's figure | measured | verdict |")
    return done.stdout, json.loads((out / "claims.json").read_text())


def _finite(value: object) -> bool:
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    return not isinstance(value, float) or math.isfinite(value)


def test_every_claim_runs_and_gets_a_row(smoke: tuple[str, dict]) -> None:
    stdout, payload = smoke
    claims = payload["claims"]
    assert [c["key"] for c in claims] == list(CLAIMS)
    for claim in claims:
        assert claim["verdict"] in VERDICTS and claim["reason"] and claim["measured"], claim["key"]
        assert claim["details"] and _finite(claim["details"]), claim["key"]
        assert f"| {claim['claim']} | {claim['article']} |" in stdout
    assert payload["settings"]["scale"] == "smoke" and payload["settings"]["seeds"] == [0, 1]


def test_smoke_values_are_sensible(smoke: tuple[str, dict]) -> None:
    details = {c["key"]: c["details"] for c in smoke[1]["claims"]}
    heads = next(iter(details["heads"].values()))
    for accuracies in (details["long_range"]["accuracy"], heads["accuracy"]):
        assert all(len(seeds) == 2 and all(0.0 <= a <= 1.0 for a in seeds) for seeds in accuracies.values())
    assert all(row["speedup"] > 0 for row in details["rnn_speed"].values())
    assert all(0 <= n <= 32 for seeds in details["shared_qkv"]["pairs_recalled"].values() for n in seeds)
    assert details["shared_qkv"]["parameters"]["shared"] < details["shared_qkv"]["parameters"]["separate"]
    assert details["int8"]["max_abs_logit_change"] >= 0.0
    norms = details["path_length"]["gradient_norm"]
    assert all(v > 0 for values in norms.values() for v in values)


@pytest.mark.parametrize("scale", list(PRESETS))
def test_every_preset_sets_every_claim(scale: str) -> None:
    settings = PRESETS[scale]()
    assert set(settings) == set(CLAIMS)
    assert all(dataclasses.asdict(s) for s in settings.values())  # what claims.json records
    assert len(SEEDS[scale]) >= 2, "accuracy comparisons need at least two seeds"


def test_judge_applies_the_stated_rule() -> None:
    assert judge(27.0, 27.0, 27.0, null=0.0).verdict == "supported"
    assert judge(33.0, 27.0, 27.0, null=0.0).verdict == "supported"  # within +25%
    assert judge(70.0, 27.0, 27.0, null=0.0).verdict == "partly"
    assert judge(2.0, 5.0, 10.0, null=1.0).verdict == "partly"
    assert judge(1.05, 5.0, 10.0, null=1.0, spread=0.1).verdict == "not supported"
    assert judge(-4.0, 15.0, 20.0, null=0.0, spread=1.0).reason == "the effect is the other way"
    with pytest.raises(ValueError, match="one side of null"):
        judge(1.0, -1.0, 1.0, null=0.0)


def test_spread_is_mean_and_half_range() -> None:
    spread = Spread.of([0.5, 0.9])
    assert spread.mean == pytest.approx(0.7) and spread.half_range == pytest.approx(0.2)


def test_tied_qkv_emits_one_projection_three_times_and_drops_two_matrices() -> None:
    encoder = Shape(dim=32, depth=2, heads=4).encoder(8)
    separate = count_parameters(encoder)
    tie_qkv(encoder)
    attention = next(m for m in encoder.modules() if isinstance(m, MultiHeadAttention))
    assert isinstance(attention.qkv, SharedQKV)
    q, k, v = attention.qkv(torch.randn(2, 8, 32)).chunk(3, dim=-1)
    torch.testing.assert_close(q, k)
    torch.testing.assert_close(q, v)
    assert separate - count_parameters(encoder) == 2 * 2 * (32 * 32 + 32)  # two blocks, two D×D + bias
    assert torch.isfinite(encoder(torch.randn(2, 8, 32))).all()


def test_matched_lstm_has_the_encoders_block_parameters_within_ten_percent() -> None:
    encoder = Shape(dim=32, depth=2, heads=2).encoder(256)
    lstm = matched_lstm(encoder)
    assert abs(count_parameters(lstm) / block_parameters(encoder) - 1) < 0.1
    assert block_parameters(encoder) == count_parameters(encoder) - 256 * 32
