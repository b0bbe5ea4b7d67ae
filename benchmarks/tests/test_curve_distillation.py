"""The distillation arms of the text curves (the student and the distilled student share MiniLM's
vocabulary, the distilled one reads its fraction's own teacher, and neither runs a permutation test), their
report, and a report written after one modality's sweep that keeps every other modality."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.curves.distillation_report import distillation_report, distillation_rows
from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey, Teacher, run_args
from benchmarks.curves.plan import MINILM_VOCABULARY, MODALITIES
from benchmarks.curves.sweep import needed_keys
from benchmarks.curves.teachers import teacher_args
from benchmarks.evidence.rate_sweep import RunLog

ROOT = Path(__file__).resolve().parents[2]
PLAN = MODALITIES["text"]


def key(arm: str, fraction: float = 0.1) -> RunKey:
    return RunKey(modality="text", arm=arm, fraction=fraction, lr=1e-3, seed=1)


def test_both_students_read_minilms_vocabulary_and_only_one_its_teacher() -> None:
    teacher = Teacher(run="results/curves/teachers/f0.1/imdb_minilm/version_0", outputs="cache.safetensors")
    student = run_args(ROOT, PLAN.arm("student"), key("student"), PLAN.protocol, PLAN.permutation_flag)
    distilled = run_args(
        ROOT, PLAN.arm("distilled"), key("distilled"), PLAN.protocol, PLAN.permutation_flag, teacher=teacher
    )
    assert str(ROOT / MINILM_VOCABULARY) in student and str(ROOT / MINILM_VOCABULARY) in distilled
    assert "--model.init_args.teacher" not in student
    at = distilled.index("--model.init_args.teacher")
    assert distilled[at + 1] == teacher.run and "--model.init_args.teacher_cache" in distilled
    # counter: without its teacher the distilled arm is refused, never trained as a plain student
    with pytest.raises(ValueError, match="needs its teacher"):
        run_args(ROOT, PLAN.arm("distilled"), key("distilled"), PLAN.protocol, PLAN.permutation_flag)


def test_the_teacher_trains_on_the_students_fraction_and_data(tmp_path: Path) -> None:
    args = teacher_args(ROOT, PLAN.arm("distilled"), key("distilled", 0.1), PLAN.protocol, 500, tmp_path)
    joined = " ".join(args)
    assert "--data.init_args.train_fraction 0.1" in joined
    for name, value in PLAN.protocol.data.items():  # the student's limit, validation size and length
        assert f"--data.init_args.{name} {value}" in joined
    steps = int(args[args.index("--trainer.max_steps") + 1])
    assert steps == PLAN.protocol.teacher_min_steps  # 500 reviews: two epochs are fewer steps than the floor
    full = teacher_args(ROOT, PLAN.arm("distilled"), key("distilled", 1.0), PLAN.protocol, 5000, tmp_path)
    assert int(full[full.index("--trainer.max_steps") + 1]) == 2 * 313  # two epochs of 5,000 at batch 16


def test_distillation_arms_run_at_their_fractions_without_permutation_runs(tmp_path: Path) -> None:
    log = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS)
    for name in ("student", "distilled"):
        arm = PLAN.arm(name)
        assert arm.fractions_of(PLAN.protocol) == (0.1, 1.0)
        pending, final = needed_keys(PLAN, arm, log)
        assert not final and {k.fraction for k in pending} == {0.1, 1.0}
        assert not any(k.permuted for k in pending)
    # counter: the transformer arm of the same plan does get permutation runs once its rates are chosen
    assert PLAN.arm("transformer").permutation_test


def curve_row(arm: str, fraction: float, seed: int, acc: float) -> dict[str, object]:
    return {"modality": "text", "arm": arm, "fraction": fraction, "seed": seed,
            "n_train": int(5000 * fraction), "test_acc": acc, "n_test": 5000, "val_acc": acc}  # fmt: skip


def test_the_report_gives_the_gain_with_an_interval_and_each_teachers_card(tmp_path: Path) -> None:
    curve = [curve_row("student", f, s, 0.70 + 0.1 * f + 0.001 * s) for f in (0.1, 1.0) for s in (0, 1, 2)]
    curve += [curve_row("distilled", 0.1, s, 0.75 + 0.001 * s) for s in (0, 1, 2)]  # +4.0 points at 10%
    curve += [curve_row("distilled", 1.0, s, 0.80 + 0.001 * s) for s in (0, 1, 2)]  # level at 100%
    (tmp_path / "f0.1.json").write_text(
        '{"global_step": 300, "fit_seconds": 900.0, "selected_on": {"metric": "val/acc", "value": 0.81}, '
        '"command": "tabrasa fit x"}'
    )
    rows = distillation_rows(PLAN, curve)
    assert [r["n_train"] for r in rows] == [500, 5000]
    assert rows[0]["gain"] == pytest.approx(0.04) and rows[0]["low"] > 0
    assert rows[1]["low"] < 0 < rows[1]["high"]  # counter: no gain, an interval around zero
    text = "\n".join(distillation_report(PLAN, curve, tmp_path))
    assert "| 500 | 3 | 0.711 | 0.751 | +4.0 |" in text and "helps" in text and "no effect shown" in text
    assert "| 0.1 | 300 | 0.810 | 900 | `tabrasa fit x` |" in text


def test_a_report_after_one_modalitys_sweep_keeps_every_other_modality(tmp_path: Path) -> None:
    import shutil

    from benchmarks.bench_curves import main

    shutil.copy(ROOT / "results" / "curves" / "runs.jsonl", tmp_path / "runs.jsonl")  # image and text runs
    main(["--modalities", "text", "--report-only", "--out", str(tmp_path),
          "--permutation-out", str(tmp_path / "summary.csv")])  # fmt: skip
    points = (tmp_path / "points.csv").read_text()
    assert "\nimage," in points and "\ntext," in points
    assert "## image" in (tmp_path / "report.md").read_text()
    assert "image," in (tmp_path / "summary.csv").read_text()  # the image permutation rows stay
