"""The learning-curve plans: the standard mode sets every arm's width (its self-pretraining included),
the wide mode keeps the plan it replaced, and a run records the steps it trained for."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.evidence.arms import MODALITIES, SELF_PRETRAINED, SWEEPS, StandardPlan, Sweep, width_args
from benchmarks.evidence.learning_curves import RunKey, arms_of, cli_args, pretraining_of

ROOT = Path(__file__).resolve().parents[2]
WIDTH_FLAGS = {
    "small": "--model.init_args.backbone.init_args.config.dim",
    "sequence_cnn": "--model.init_args.backbone.init_args.dim",
    "sequence_lstm": "--model.init_args.backbone.init_args.dim",
    "grid_cnn": "--model.init_args.backbone.init_args.dim",
}


def pairs_of(args: list[str]) -> dict[str, str]:
    return dict(zip(args[::2], args[1::2], strict=True))


@pytest.mark.parametrize("name", list(MODALITIES))
def test_each_arm_of_a_plan_runs_at_its_width_and_the_wide_plan_at_the_yamls(name: str) -> None:
    modality = MODALITIES[name]
    for mode in ("standard", "wide"):
        sweep = SWEEPS[mode]
        plan = getattr(modality, mode)
        for arm in arms_of(modality, sweep):
            key = RunKey(modality=name, arm=arm, fraction=0.3, lr=1e-3, seed=0)
            pairs = pairs_of(cli_args(ROOT, modality, key, sweep, export="/x"))
            backbone = "small" if arm == SELF_PRETRAINED else arm
            flag = WIDTH_FLAGS[backbone]
            if plan.width is None:
                assert flag not in pairs, f"{mode} {name}/{arm} keeps the YAML's width"
            else:
                assert pairs[flag] == str(plan.width), f"{mode} {name}/{arm}"
            assert pairs["--trainer.max_steps"] == str(plan.steps)
        # The pretraining behind the self-pretrained arm builds the transformer at the same width.
        _, budget = pretraining_of(modality, sweep)
        assert budget.backbone_args == tuple(width_args("small", plan.width))
    assert MODALITIES["protein"].standard.width == 64 and MODALITIES["protein"].wide.width is None  # type: ignore[union-attr]


def test_plans_and_widths_refuse_what_cannot_run() -> None:
    with pytest.raises(ValueError, match=r"Sweep.plan='tall': name one of \('standard', 'wide'\)"):
        replace(SWEEPS["standard"], plan="tall")
    with pytest.raises(ValueError, match=r"StandardPlan.width=4: give a hidden width >= 8"):
        StandardPlan(steps=1, batch_size=1, width=4)
    with pytest.raises(ValueError, match=r"backbone .mamba. has no width key: add it to arms\.WIDTH_KEYS"):
        width_args("mamba", 64)
    assert width_args("mamba", None) == []
    assert isinstance(SWEEPS["wide"], Sweep) and SWEEPS["wide"].standard


@pytest.mark.slow
def test_a_narrow_plan_trains_every_arm_and_its_pretraining_at_its_width(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.evidence.learning_curves import run_sweep
    from benchmarks.evidence.rate_sweep import RunLog

    wide = MODALITIES["image"]
    plan = StandardPlan(steps=2, batch_size=8, pretrain_steps=2)
    sweep = replace(SWEEPS["smoke"], plan="standard", self_pretrained=True, fractions=(1.0,), seeds=(0,))
    params = {}
    for width in (None, 16):
        monkeypatch.setitem(MODALITIES, "image", replace(wide, standard=replace(plan, width=width)))
        out = tmp_path / str(width)
        run_sweep(
            ROOT,
            ["image"],
            sweep,
            RunLog(out / "runs.jsonl", ("modality", "arm", "fraction", "lr", "seed")),
            echo=False,
        )
        runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
        assert {r["arm"] for r in runs} == {"small", "grid_cnn", SELF_PRETRAINED}
        assert all(r["steps"] == 2 for r in runs), "each run records the steps it trained for"
        params[width] = {r["arm"]: r["params"] for r in runs}
    for arm in ("small", "grid_cnn"):
        assert params[16][arm] < params[None][arm] / 4, f"{arm} at width 16: {params}"
    # Fine-tuning loads the export strictly, so this run exists only if its pretraining was 16 wide too.
    assert params[16][SELF_PRETRAINED] == params[16]["small"]
