"""bench_claims.py end to end on a tiny slice (--smoke), plus the pieces its verdicts rest on."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from benchmarks.evidence.claims import CLAIMS, layernorm, path_length
from benchmarks.evidence.claims.arm_sweep import choose_rate, final_validation, fit_arm
from benchmarks.evidence.claims.paired_timing import median_interval, ratio_interval
from benchmarks.evidence.intervals import Interval, hierarchical_bootstrap, mean_interval, wilson_interval
from benchmarks.evidence.models import Shape, count_parameters, matched_lstm, set_forget_bias
from benchmarks.evidence.presets import PRESETS, SEEDS
from benchmarks.evidence.probe import Batch, ProbeModel
from benchmarks.evidence.report import ClaimResult, Judgement, combine, judge, untrained
from benchmarks.evidence.runner import merge
from benchmarks.evidence.synthetic_tasks import FirstTokensTask
from benchmarks.evidence.synthetic_training import TEST_SEED, History, TrainConfig
from benchmarks.evidence.tied_qkv import SharedQKV, tie_qkv
from benchmarks.evidence.timing import Timing
from tabrasa.backbone.attention import MultiHeadAttention

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = {"supported", "contradicted", "different size", "inconclusive", "mixed", "no verdict"}
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("claims")
    done = subprocess.run(
        # One thread: beside other jobs, oversubscribed threads slow the tiny steps twentyfold.
        [sys.executable, "-m", "benchmarks.bench_claims", "--smoke", "--threads", "1", "--out", str(out)],
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
    for row in details["rnn_speed"].values():  # the ratio is the median of the per-round ratios
        rounds = row["seconds_per_round"]
        ratios = sorted(lstm / t for lstm, t in zip(rounds["lstm"], rounds["transformer"], strict=True))
        assert len(ratios) == 6 and row["speedup"] == pytest.approx((ratios[2] + ratios[3]) / 2)
        assert row["interval"] == pytest.approx([ratios[0], ratios[-1]])  # six rounds: [min, max]
    # Totals by hand (smoke: dim 32, 2 blocks, sinusoidal positions; FirstTokensTask(64, signal 4) has 21
    # ids and 4 classes): token table 21·32 + head 2·32 + 32·4 + 4, around 25,472 encoder or 25,664 LSTM.
    assert details["long_range"]["parameters_total"] == {
        "transformer": 21 * 32 + 25_472 + 196,
        "LSTM": 21 * 32 + 4 * 6_400 + 64 + 196,
    }
    sizes = details["shared_qkv"]["parameters_total"]  # tying drops two D×D + bias per block
    assert sizes["separate"] - sizes["shared"] == 2 * 2 * (32 * 32 + 32)
    for arm in details["long_range"]["arms"].values():  # the sweep is recorded, one score per rate
        assert set(arm["validation_by_lr"]) == {"0.001", "0.01"} and arm["lr"] in (1e-3, 1e-2)
        assert len(arm["test"]) == 2
        # Smoke's curriculum: N=8 and 16 for 2 steps each, then 4 at N=64; each stage's accuracy per seed.
        assert arm["steps"] == 2 + 2 + 4 and len(arm["stage_test"]) == 2
        assert all(len(stage) == 2 and all(0 <= a <= 1 for a in stage) for stage in arm["stage_test"])
    assert details["long_range"]["lengths"] == [8, 16, 64]
    mixers = details["long_range_mixers"]  # each mixer within ±20% of the transformer it is judged against
    sizes = mixers["parameters_total"]
    assert list(sizes) == ["transformer", "Mamba", "GAU", "ODE"]
    assert sizes["transformer"] == details["long_range"]["parameters_total"]["transformer"]
    assert all(abs(size - sizes["transformer"]) <= 0.2 * sizes["transformer"] for size in sizes.values())
    assert set(mixers["gap_points_vs_transformer"]) == {"Mamba", "GAU", "ODE"}
    for name, (mean, low, high) in mixers["gap_points_vs_transformer"].items():
        accuracy = mixers["accuracy"]
        assert low <= mean <= high, name
        assert mean == pytest.approx(100 * (accuracy[name][0] - accuracy["transformer"][0])), name
    assert details["path_length"]["compared_up_to"] in details["path_length"]["lengths"]


def _compared_arms(details: object) -> list[dict[str, dict]]:
    """Every `arms` mapping in a claim's details, at any depth (heads has one per difficulty)."""
    if not isinstance(details, dict):
        return []
    found = [details["arms"]] if isinstance(details.get("arms"), dict) else []
    return found + [arms for value in details.values() for arms in _compared_arms(value)]


@pytest.mark.slow
def test_compared_arms_ran_the_same_steps_and_batch_in_every_claim(smoke: tuple[str, dict]) -> None:
    details = {c["key"]: c["details"] for c in smoke[1]["claims"]}
    compared = {key: _compared_arms(value) for key, value in details.items()}
    assert {key for key, found in compared.items() if found} == {
        "long_range",
        "long_range_mixers",
        "heads",
        "layernorm",
        "shared_qkv",
    }
    for key, found in compared.items():
        for arms in found:
            assert len(arms) == (4 if key == "long_range_mixers" else 2), key
            budgets = {(arm["steps"], arm["batch"]) for arm in arms.values()}
            assert len(budgets) == 1, f"{key}: arms ran {budgets}"
    # int8 compares one trained model with its own quantised copy: one budget by construction.
    assert "arms" not in details["int8"] and "lr" in details["int8"]["trained"]


@pytest.mark.parametrize("scale", list(PRESETS))
def test_no_claim_can_give_its_compared_arms_different_budgets(scale: str) -> None:
    # One TrainConfig per claim (and one curriculum for long_range), shared by every arm it compares: a
    # second budget, like the LSTM's old 300 steps against the transformer's 150, cannot be set.
    for key, value in PRESETS[scale]().items():
        budgets = [
            f.name for f in dataclasses.fields(value) if isinstance(getattr(value, f.name), TrainConfig)
        ]
        assert len(budgets) <= 1, f"{key} has budgets {budgets}"


@pytest.mark.parametrize("scale", list(PRESETS))
def test_every_preset_sets_every_claim_with_its_own_settings(scale: str) -> None:
    settings = PRESETS[scale]()
    assert list(settings) == list(CLAIMS)
    for key, value in settings.items():
        assert type(value) is importlib.import_module(f"benchmarks.evidence.claims.{key}").Settings, key
        json.dumps(dataclasses.asdict(value))  # what claims.json records must serialise
    assert len(SEEDS[scale]) >= 2, "accuracy comparisons need at least two seeds"


def test_quick_and_full_intervals_rest_on_three_seeds() -> None:
    assert SEEDS["quick"] == SEEDS["full"] == (0, 1, 2)


def _interval(low: float, high: float) -> Interval:
    return Interval((low + high) / 2, (high - low) / 2, 3)


def test_judge_applies_the_four_way_rule() -> None:
    rule = [  # (interval, article's range, null, verdict)
        ((6.0, 8.0), (5.0, 10.0), 1.0, "supported"),
        ((10.0, 12.0), (5.0, 10.0), 1.0, "supported"),  # touching the range overlaps it
        ((24.0, 30.0), (27.0, 27.0), 0.0, "supported"),  # a single figure is the range [x, x]
        ((1.3, 1.5), (5.0, 10.0), 1.0, "different size"),  # 1.4× against 5-10×: right way, too small
        ((70.0, 83.0), (27.0, 27.0), 0.0, "different size"),
        ((0.6, 0.9), (5.0, 10.0), 1.0, "contradicted"),
        ((0.0, 0.0), (15.0, 20.0), 0.0, "contradicted"),  # exactly no effect excludes the article's way
        ((0.9, 1.6), (5.0, 10.0), 1.0, "inconclusive"),  # includes no effect, misses the range
        ((0.5, 0.6), (0.2, 0.3), 1.0, "different size"),  # an article that says "smaller than 1"
        ((1.1, 1.2), (0.2, 0.3), 1.0, "contradicted"),
    ]
    for (low, high), (a, b), null, verdict in rule:
        assert judge(_interval(low, high), a, b, null=null).verdict == verdict, (low, high, a, b)
    assert "smaller" in judge(_interval(1.3, 1.5), 5.0, 10.0, null=1.0).reason
    assert "larger" in judge(_interval(70.0, 83.0), 27.0, 27.0, null=0.0).reason
    overlapping_null = judge(_interval(-1.0, 30.0), 27.0, 27.0, null=0.0)
    assert overlapping_null.verdict == "inconclusive" and "includes no effect" in overlapping_null.reason
    with pytest.raises(ValueError, match="one side of null"):
        judge(_interval(0.0, 1.0), -1.0, 1.0, null=0.0)


def test_an_interval_that_overlaps_the_range_but_includes_no_effect_is_not_supported() -> None:
    # The 16-pair heads row: one head cost 11.9% [-2.1, 25.8] against the article's 15-20%. The old rule
    # called any overlap "supported"; an interval that admits no cost at all supports no cost of 15-20%.
    heads_row = judge(_interval(-2.1, 25.8), 15.0, 20.0, null=0.0)
    assert heads_row.verdict == "inconclusive"
    assert judge(_interval(0.0, 25.8), 15.0, 20.0, null=0.0).verdict == "inconclusive"  # touching null
    assert judge(_interval(0.1, 25.8), 15.0, 20.0, null=0.0).verdict == "supported"
    assert judge(_interval(0.8, 1.2), 0.5, 0.9, null=1.0).verdict == "inconclusive"  # ratios, below 1
    assert judge(_interval(1.0, 3.5), 3.0, 5.0, null=1.0).verdict == "inconclusive"


def test_wilson_matches_scipy_and_a_hand_computed_value_and_stays_in_the_unit_interval() -> None:
    # 8 of 10 at z = 1.96: centre (0.8 + 1.96²/20) / (1 + 1.96²/10) = 0.7167, half-width 0.2266.
    eight = wilson_interval(8, 10)
    assert (eight.low, eight.high) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    for successes, n in ((81, 263), (0, 1024), (1024, 1024), (1, 3)):
        reference = stats.binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
        mine = wilson_interval(successes, n)
        assert (mine.low, mine.high) == pytest.approx((reference.low, reference.high), abs=1e-9)
    none, every = wilson_interval(0, 1024), wilson_interval(1024, 1024)
    assert none.low == 0.0 < none.high < 0.004 and 0.996 < every.low < every.high == 1.0
    with pytest.raises(ValueError, match="successes <= n"):
        wilson_interval(5, 4)


def test_the_hierarchical_bootstrap_stays_feasible_pairs_arms_and_sees_seed_spread() -> None:
    rng = np.random.default_rng(0)
    perfect, wrong = np.ones((3, 1024)), np.zeros((3, 1024))
    both = {"a": perfect, "b": wrong}
    first = hierarchical_bootstrap(both, lambda x: x["a"] - x["b"])
    assert first == hierarchical_bootstrap(both, lambda x: x["a"] - x["b"])  # a fixed resampling seed
    top = hierarchical_bootstrap(both, lambda x: x["a"])
    assert (top.mean, top.low, top.high, top.n, top.examples) == (1.0, 1.0, 1.0, 3, 1024)
    gap = hierarchical_bootstrap(both, lambda x: 100 * (x["a"] - x["b"]))
    assert (gap.low, gap.high) == (100.0, 100.0)  # the most a gap in points can be
    # Near the bound, the interval stays inside [0, 1] where a t-interval over seeds would not.
    high = (rng.random((3, 64)) < np.array([[0.78], [1.0], [0.69]])).astype(float)
    boot = hierarchical_bootstrap({"a": high}, lambda x: x["a"])
    assert 0.0 <= boot.low < boot.mean < boot.high <= 1.0
    assert mean_interval(high.mean(axis=1).tolist()).high > 1.0
    # Paired: two arms with the same outcomes differ by exactly 0 in every resample.
    same = (rng.random((3, 1024)) < 0.6).astype(float)
    tied = hierarchical_bootstrap({"a": same, "b": same.copy()}, lambda x: x["a"] - x["b"])
    assert (tied.low, tied.high) == (0.0, 0.0)
    # One seed: the example level alone, close to the binomial standard error 1.96·√(p(1 − p)/n).
    one = (rng.random((1, 4000)) < 0.5).astype(float)
    single = hierarchical_bootstrap({"a": one}, lambda x: x["a"])
    assert single.high - single.low == pytest.approx(2 * 1.96 * math.sqrt(0.25 / 4000), rel=0.1)
    # Seeds that disagree widen it far beyond the examples' share.
    spread = np.stack([np.full(1024, v) for v in (0.0, 0.5, 1.0)])
    assert hierarchical_bootstrap({"a": spread}, lambda x: x["a"]).high - 0.5 > 0.2
    with pytest.raises(ValueError, match="one shape"):
        hierarchical_bootstrap({"a": perfect, "b": np.ones((2, 1024))}, lambda x: x["a"])


def _row(key: str, measured: str) -> dict:
    return dataclasses.asdict(ClaimResult(key, key, "x", measured, "inconclusive", "r"))


def test_only_merges_its_rows_into_the_existing_file_in_table_order(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    old = {
        "settings": {
            "scale": "quick",
            "seeds": [0, 1, 2],
            "device": "cpu",
            "threads": 1,
            "torch": "old",
            "claims": {"long_range": {"a": 1}, "heads": {"b": 2}},
            "separate_runs": {"heads": "run alone"},
        },
        "claims": [_row("long_range", "old long"), _row("heads", "old heads")],
    }
    path.write_text(json.dumps(old))
    new = ClaimResult("rnn_speed", "rnn", "x", "new", "supported", "r")
    run = {"device": "cpu", "threads": 1, "torch": "new", "finished": "now"}
    used = {
        "scale": "quick",
        "seeds": [0, 1, 2],
        "claims": {"rnn_speed": {"c": 3}},
        "runs": {"rnn_speed": run},
    }
    rows, settings = merge(path, [new], used)
    assert [r.key for r in rows] == ["long_range", "rnn_speed", "heads"]  # CLAIMS order
    assert rows[0].measured == "old long" and rows[1] is new
    assert list(settings["claims"]) == ["long_range", "rnn_speed", "heads"]
    assert settings["runs"]["heads"] == {"device": "cpu", "threads": 1, "torch": "old"}  # the old run's
    assert settings["runs"]["rnn_speed"] == run and settings["separate_runs"] == {"heads": "run alone"}
    rerun = ClaimResult("heads", "heads", "x", "new heads", "supported", "r")
    rows, settings = merge(path, [rerun], used | {"claims": {"heads": {}}, "runs": {"heads": run}})
    assert [r.measured for r in rows] == ["old long", "new heads"] and "separate_runs" not in settings
    assert merge(tmp_path / "absent.json", [new], used) == ([new], used)
    with pytest.raises(ValueError, match="scale 'quick'"):
        merge(path, [new], used | {"scale": "smoke"})


def test_the_interval_is_student_t_over_seeds_and_the_point_for_one() -> None:
    three = mean_interval([10.0, 12.0, 14.0])  # sd 2, t_{0.975, 2} = 4.303
    assert three.half_width == pytest.approx(4.3027 * 2 / math.sqrt(3), rel=1e-4)
    one = mean_interval([1.4])
    assert (one.low, one.high) == (1.4, 1.4)
    assert judge(one, 5.0, 10.0, null=1.0).verdict == "different size"  # a point is judged as a point


def test_an_arm_within_the_margin_of_chance_never_trained_and_voids_the_row() -> None:
    # Four classes: the margin ends at 25% + 10% of 75% = 32.5%.
    stuck = untrained({"transformer": [1.0, 1.0, 1.0], "LSTM": [0.234, 0.25, 0.27]}, chance=0.25)
    assert stuck is not None and stuck.verdict == "no verdict"
    assert stuck.reason.startswith("LSTM never trained")
    assert untrained({"LSTM": [0.32, 0.32, 0.33]}, chance=0.25) is not None  # mean 32.3%
    assert untrained({"LSTM": [0.33, 0.33, 0.33]}, chance=0.25) is None


def test_combine_is_unanimous_mixed_naming_the_split_or_void() -> None:
    yes = judge(_interval(6.0, 8.0), 5.0, 10.0, null=1.0)
    no = judge(_interval(0.6, 0.9), 5.0, 10.0, null=1.0)
    void = Judgement("no verdict", "1 head never trained")
    assert combine([yes, yes], ["a", "b"]).verdict == "supported"
    split = combine([yes, no], ["N=64", "N=1024"])
    assert split == Judgement("mixed", "N=64 supported; N=1024 contradicted")
    assert combine([yes, void], ["8 pairs", "16 pairs"]) == Judgement(
        "no verdict", "16 pairs: 1 head never trained"
    )
    assert combine([no], ["N=64"]) == no


def test_median_interval_uses_order_statistics_and_pairs_rounds() -> None:
    ten = median_interval([float(v) for v in range(1, 11)])
    assert (ten.median, ten.low, ten.high) == (5.5, 2.0, 9.0)  # 97.9% coverage; [3, 8] would be 89%
    twenty = median_interval([float(v) for v in range(1, 21)])
    assert (twenty.low, twenty.high) == (6.0, 15.0)
    with pytest.raises(ValueError, match="at least 6"):
        median_interval([1.0] * 5)
    # Round i of the slow arm is divided by round i of the fast one, not by the fast arm's median.
    slow, fast = Timing((2.0, 4.0, 2.0, 4.0, 2.0, 4.0)), Timing((1.0, 2.0, 1.0, 2.0, 1.0, 2.0))
    paired = ratio_interval(slow, fast)
    assert (paired.median, paired.low, paired.high) == (2.0, 2.0, 2.0)


def test_the_rate_is_chosen_on_validation_even_where_test_disagrees() -> None:
    runs = {  # lr: (validation curve, test curve)
        1e-3: ([(10, 0.9)], [(10, 0.2)]),
        1e-2: ([(10, 0.5)], [(10, 0.95)]),
        3e-2: ([(10, 0.9)], [(10, 0.9)]),  # ties on validation go to the smaller rate
    }
    choice = choose_rate(
        lambda lr: History(evals=runs[lr][0], tests=runs[lr][1]), list(runs), final_validation
    )
    assert choice.lr == 1e-3 and choice.scores == {1e-3: 0.9, 1e-2: 0.5, 3e-2: 0.9}
    diverged = History(evals=[(10, 1.0)], diverged=True)  # its last accuracy never counts

    def train_at(lr: float) -> History:
        return diverged if lr == 1e-2 else History(evals=[(10, 0.3)])

    assert choose_rate(train_at, [1e-3, 1e-2], final_validation).lr == 1e-3


@dataclass(frozen=True)
class _TestLabelsShifted:
    """FirstTokensTask whose *test* stream (and only it) has every label moved by one: a model that
    learns scores ~0 on test and ~1 on validation, an untrained one ~chance on both."""

    base: FirstTokensTask

    @property
    def vocab_size(self) -> int:
        return self.base.vocab_size

    @property
    def classes(self) -> int:
        return self.base.classes

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        batch = self.base.sample(batch_size, generator)
        if generator.initial_seed() == TEST_SEED:
            return Batch(batch.ids, (batch.label + 1) % self.classes)
        return batch


def test_fit_arm_chooses_on_the_validation_stream_and_reports_the_test_stream() -> None:
    task = _TestLabelsShifted(FirstTokensTask(length=4, signal=1, classes=4, noise_vocab=4))
    shape = Shape(dim=32, depth=1, heads=2)

    def build() -> ProbeModel:
        return ProbeModel(shape.encoder(task.base.length), task.vocab_size, task.classes)

    config = TrainConfig(steps=60, batch=32, eval_batches=4)
    arm = fit_arm(build, task, config, seeds=(0,), device=CPU, rates=(1e-6, 3e-3))
    # Test would pick 1e-6 (chance beats 0); validation picks the rate that learned.
    assert arm.choice.lr == 3e-3
    assert arm.choice.scores[3e-3] > 0.9 > 0.5 > arm.choice.scores[1e-6]
    assert arm.test[0] < 0.1  # the shifted test stream was the one reported
    assert arm.details()["validation_by_lr"].keys() == {"1e-06", "0.003"}


def test_path_length_verdict_on_constructed_norms() -> None:
    lengths = [64, 128, 256]
    one_over_n = [1 / n for n in lengths]
    geometric = [10.0 ** (-n / 8) for n in lengths]
    supported = path_length._summarise(lengths, {"transformer": one_over_n, "lstm": geometric})[1]
    assert supported.verdict == "supported"
    steep = [n**-3.0 for n in lengths]  # attention itself falling faster than 1/n
    steep_verdict = path_length._summarise(lengths, {"transformer": steep, "lstm": geometric})[1]
    assert steep_verdict.verdict == "different size"
    same = path_length._summarise(lengths, {"transformer": one_over_n, "lstm": one_over_n})[1]
    assert same.verdict == "contradicted"
    slightly = [2 / n if n > 64 else 1 / n for n in lengths]  # recurrence 2× faster: under MIN_CONTRAST
    assert path_length._summarise(lengths, {"transformer": slightly, "lstm": one_over_n})[1].verdict == (
        "inconclusive"
    )
    underflow = path_length._summarise(lengths, {"transformer": one_over_n, "lstm": [1e-3, 1e-200, 0.0]})[0]
    assert "below float64's range at n=256" in underflow


def test_steps_to_threshold_reads_the_first_evaluation_that_reaches_it() -> None:
    curve = [(25, 0.4), (50, 0.91), (75, 0.85), (100, 0.95)]
    assert layernorm.steps_to(curve, 0.9) == 50
    assert layernorm.steps_to(curve, 0.99) is None


def test_a_censored_layernorm_ratio_can_only_show_larger() -> None:
    assert layernorm.ratio_verdict([6.0, 7.0, 6.5], censored=True, budget=1500).verdict == "different size"
    assert layernorm.ratio_verdict([2.5, 3.5, 3.0], censored=True, budget=1500).verdict == "inconclusive"
    assert layernorm.ratio_verdict([2.5, 3.5, 3.0], censored=False, budget=1500).verdict == "supported"
    score = layernorm.converges_soonest(0.9)
    fast, slow = (
        History(evals=[(25, 0.95)], losses=[0.0] * 25),
        History(evals=[(50, 0.95)], losses=[0.0] * 50),
    )
    never = History(evals=[(50, 0.8)], losses=[0.0] * 50)
    assert score(fast) > score(slow) > score(never)


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


def test_parameter_counts_include_the_position_table_by_hand() -> None:
    # One pre-LN block at dim 32, MLP ×4: two LayerNorms 2·64, qkv 32·96 + 96, out 32·32 + 32, MLP
    # 32·128 + 128 and 128·32 + 32 = 12,704; two blocks and the final norm: 25,472.
    blocks = 2 * (2 * 64 + 32 * 96 + 96 + 32 * 32 + 32 + 32 * 128 + 128 + 128 * 32 + 32) + 64
    learned = Shape(dim=32, depth=2, heads=2).encoder(256)
    assert count_parameters(learned) == blocks + 256 * 32  # the position table counts
    # Matched on the whole count: 33,664 → 5 LSTM layers of 2·4·16·(32 + 16 + 2) = 6,400, plus the norm.
    assert count_parameters(matched_lstm(learned)) == 5 * 6_400 + 64
    sinusoidal = Shape(dim=32, depth=2, heads=2, positions="sinusoidal").encoder(256)
    assert count_parameters(sinusoidal) == blocks
    assert count_parameters(matched_lstm(sinusoidal)) == 4 * 6_400 + 64
    model = ProbeModel(sinusoidal, vocab_size=21, classes=4)  # the totals the rows state
    assert count_parameters(model) == 21 * 32 + blocks + (2 * 32 + 32 * 4 + 4)


def test_set_forget_bias_moves_only_the_forget_gates_of_every_layer_and_direction() -> None:
    encoder = Shape(dim=32, depth=2, heads=2, positions="sinusoidal").encoder(64)
    lstm = matched_lstm(encoder)
    before = {name: p.detach().clone() for name, p in lstm.named_parameters()}
    set_forget_bias(lstm, 3.0)
    assert count_parameters(lstm) == sum(p.numel() for p in before.values())
    for name, p in lstm.lstm.named_parameters():
        old = before[f"lstm.{name}"]
        if not name.startswith("bias_"):
            torch.testing.assert_close(p, old)
            continue
        units = p.shape[0] // 4  # gates (input, forget, cell, output)
        forget = torch.full((units,), 3.0 if name.startswith("bias_ih") else 0.0)
        torch.testing.assert_close(p[units : 2 * units], forget)
        torch.testing.assert_close(p[:units], old[:units])
        torch.testing.assert_close(p[2 * units :], old[2 * units :])
    biases = [n for n, _ in lstm.lstm.named_parameters() if n.startswith("bias_")]
    assert len(biases) == 2 * 2 * lstm.lstm.num_layers  # input and hidden, both directions, every layer


def test_matched_mixer_picks_the_closest_size_and_refuses_none_within_a_fifth() -> None:
    from benchmarks.evidence.claims.long_range_mixers import matched_mixer

    target = count_parameters(Shape(dim=32, depth=2, heads=2, positions="sinusoidal").encoder(1024))
    for name in ("Mamba", "GAU", "ODE"):
        size = count_parameters(matched_mixer(name, target, 32, 2, 1024)())
        assert abs(size - target) <= 0.2 * target, name
    with pytest.raises(ValueError, match="no Mamba of width 32 comes within 20%"):  # counter-test
        matched_mixer("Mamba", 1_000, 32, 2, 1024)


def test_long_range_mixers_refuses_an_unknown_arm_or_one_without_mamba() -> None:
    from benchmarks.evidence.claims.long_range_mixers import Settings

    with pytest.raises(ValueError, match="choose among"):
        Settings(mixers=("Mamba", "S4"))
    with pytest.raises(ValueError, match="Mamba included"):
        Settings(mixers=("GAU",))


def test_a_run_cache_resumes_finished_runs_and_keys_them_by_what_trained_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.evidence.claims import run_cache
    from benchmarks.evidence.claims.long_range_mixers import Settings

    task = FirstTokensTask(length=4, signal=1, classes=4, noise_vocab=4)
    shape = Shape(dim=32, depth=1, heads=2)
    built: list[int] = []

    def build() -> ProbeModel:
        built.append(1)
        return ProbeModel(shape.encoder(task.length), task.vocab_size, task.classes)

    config = TrainConfig(steps=4, batch=8, eval_batches=1, test_examples=16)
    monkeypatch.setattr(run_cache, "_folder", None)
    assert run_cache.RunCache.for_arm("c", "arm", Settings(), CPU) is None  # no folder: nothing kept
    run_cache.use_folder(tmp_path)
    cache = run_cache.RunCache.for_arm("c", "arm", Settings(), CPU)
    first = fit_arm(build, task, config, seeds=(0, 1), device=CPU, rates=(1e-3, 1e-2), cache=cache)
    assert len(built) == 3 and len(list(tmp_path.glob("*.pt"))) == 3  # two rates at seed 0, then seed 1
    again = fit_arm(build, task, config, seeds=(0, 1), device=CPU, rates=(1e-3, 1e-2), cache=cache)
    assert len(built) == 3  # nothing trained again
    assert again.details() == first.details() and np.array_equal(again.correct, first.correct)
    # counter-test: other settings are another identity, so their runs train
    other = run_cache.RunCache.for_arm("c", "arm", Settings(lstm_forget_bias=1.0), CPU)
    assert other is not None and cache is not None and other.identity != cache.identity
    fit_arm(build, task, config, seeds=(0,), device=CPU, rates=(1e-3,), cache=other)
    assert len(built) == 4 and not list(tmp_path.glob("*.partial"))
