"""bench_claims.py end to end on a tiny slice (--smoke), plus the pieces its verdicts rest on."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tabrasa.backbone.attention import MultiHeadAttention
from tabrasa.evidence.claims import (
    CLAIMS,
    layernorm,
    path_length,
)
from tabrasa.evidence.models import Shape, block_parameters, count_parameters, matched_lstm
from tabrasa.evidence.presets import PRESETS, SEEDS
from tabrasa.evidence.report import Spread, combine, judge
from tabrasa.evidence.synthetic_training import History
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
        timeout=600,  # a guard against a hang, not a speed target: a loaded machine is slower
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


@pytest.mark.slow
def test_every_claim_runs_and_gets_a_row(smoke: tuple[str, dict]) -> None:
    stdout, payload = smoke
    claims = payload["claims"]
    assert [c["key"] for c in claims] == list(CLAIMS)
    for claim in claims:
        assert claim["verdict"] in VERDICTS and claim["reason"] and claim["measured"], claim["key"]
        assert claim["details"] and _finite(claim["details"]), claim["key"]
        assert f"| {claim['claim']} | {claim['article']} |" in stdout
    assert payload["settings"]["scale"] == "smoke" and payload["settings"]["seeds"] == [0, 1]


@pytest.mark.slow
def test_smoke_details_agree_with_the_models_and_timings_they_report(smoke: tuple[str, dict]) -> None:
    details = {c["key"]: c["details"] for c in smoke[1]["claims"]}
    for row in details["rnn_speed"].values():  # the reported ratio is the ratio of the reported medians
        seconds = row["seconds_per_step"]
        assert row["speedup"] == pytest.approx(seconds["lstm"] / seconds["transformer"])
    sizes = details["shared_qkv"]["parameters"]  # smoke: dim 32, 2 blocks; tying drops two D×D + bias each
    assert sizes["separate"] - sizes["shared"] == 2 * 2 * (32 * 32 + 32)
    for label, timing in details["int8"]["timings"].items():
        assert timing["speedup"] == pytest.approx(timing["seconds"]["fp32"] / timing["seconds"]["int8"]), (
            label
        )
    assert details["path_length"]["compared_up_to"] in details["path_length"]["lengths"]


@pytest.mark.parametrize("scale", list(PRESETS))
def test_every_preset_sets_every_claim_with_its_own_settings(scale: str) -> None:
    settings = PRESETS[scale]()
    assert list(settings) == list(CLAIMS)
    for key, value in settings.items():
        assert type(value) is importlib.import_module(f"tabrasa.evidence.claims.{key}").Settings, key
        json.dumps(dataclasses.asdict(value))  # what claims.json records must serialise
    assert len(SEEDS[scale]) >= 2, "accuracy comparisons need at least two seeds"


def test_path_length_verdict_on_constructed_norms() -> None:
    lengths = [64, 128, 256]
    one_over_n = [1 / n for n in lengths]
    geometric = [10.0 ** (-n / 8) for n in lengths]
    supported = path_length._summarise(lengths, {"transformer": one_over_n, "lstm": geometric})[1]
    assert supported.verdict == "supported"
    steep = [n**-3.0 for n in lengths]  # attention itself falling faster than 1/n
    assert path_length._summarise(lengths, {"transformer": steep, "lstm": geometric})[1].verdict == "partly"
    same = path_length._summarise(lengths, {"transformer": one_over_n, "lstm": one_over_n})[1]
    assert same.verdict == "not supported"
    underflow = path_length._summarise(lengths, {"transformer": one_over_n, "lstm": [1e-3, 1e-200, 0.0]})[0]
    assert "below float64's range at n=256" in underflow


def test_combine_is_unanimous_or_partly_naming_the_split() -> None:
    yes, no = judge(27.0, 27.0, 27.0, null=0.0), judge(0.0, 27.0, 27.0, null=0.0, spread=1.0)
    assert combine([yes, yes], ["a", "b"]) == yes
    split = combine([yes, no], ["N=64", "N=1024"])
    assert (
        split.verdict == "partly"
        and split.reason == "depends on the setting (N=64: supported; N=1024: not supported)"
    )


def test_steps_to_threshold_reads_the_first_evaluation_that_reaches_it() -> None:
    history = History(evals=[(25, 0.4), (50, 0.91), (75, 0.85), (100, 0.95)])
    assert layernorm.steps_to(history, 0.9) == 50
    assert layernorm.steps_to(history, 0.99) is None


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
