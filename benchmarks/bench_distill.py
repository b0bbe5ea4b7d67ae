"""Distilled student vs the same student trained from scratch, at equal student steps, on the full and on a
10% IMDB training set, over seeds; plus the student's and the teacher's inference speed.

    tabrasa fit --config configs/text/imdb_minilm.yaml                  # the teacher: MiniLM on IMDB
    python -m benchmarks.bench_distill --teacher runs/imdb_minilm/version_0

Both arms are `tabrasa fit` runs of the same config (configs/text/imdb.yaml: data, the `small` 2×128
backbone, optimizer), the distilled arm layered with configs/distill/imdb_small.yaml; each trains for
exactly `--steps` optimizer steps (the cosine schedule spans them) without validation, and is scored on the
test split. The teacher reads the student's batches, so both arms tokenize as the teacher does: a teacher
on a pretrained vocabulary (MiniLM's) puts both students on that vocabulary, with embeddings learned from
scratch. Writes results/distill/bench_distill.json and .md, after every run.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tabrasa.deploy.run import load_run
from tabrasa.training.lightning_cli import build_cli

ROOT = Path(__file__).resolve().parents[1]
TASK = ROOT / "configs" / "text" / "imdb.yaml"
DISTILL = ROOT / "configs" / "distill" / "imdb_small.yaml"


def fit_student(
    arm: str, fraction: float, seed: int, options: argparse.Namespace, root: str
) -> torch.nn.Module:
    configs = ["--config", str(TASK)] + (["--config", str(DISTILL)] if arm == "distilled" else [])
    teacher = ["--model.init_args.teacher", options.teacher, "--model.init_args.teacher_ckpt",
               options.teacher_ckpt] if arm == "distilled" else []  # fmt: skip
    cli = build_cli(
        ["fit", *configs, *teacher, *options.vocabulary,
         "--seed_everything", str(seed),
         "--data.init_args.train_fraction", str(fraction),
         "--data.init_args.tokenizer.init_args.max_length", str(options.max_length),
         "--data.init_args.loader.num_workers", "0",
         "--trainer.max_steps", str(options.steps),
         "--trainer.max_epochs", "1000",
         "--trainer.limit_val_batches", "0",
         "--trainer.logger", "false",
         "--trainer.enable_progress_bar", "false",
         "--trainer.enable_model_summary", "false",
         "--trainer.default_root_dir", root,
         "--test_after_fit", "false"],
        trainer_defaults_override={"callbacks": []},
        save_config=False,
    )  # fmt: skip
    return cli.model.eval()


def teacher_vocabulary(datamodule: Any) -> list[str]:
    """The data overrides that tokenize a student as the teacher's run does: its pretrained vocabulary
    file (the SubwordTokenizer's path), or nothing when the teacher trained IMDB's own (the student's
    config trains the same one from the same split). Not tokenizer_family: that would give the student the
    family's embedder, whose shape is the checkpoint's width, not the student's."""
    path = getattr(datamodule.tokenizer, "path", None)
    return [] if path is None else ["--data.init_args.tokenizer.init_args.path", str(path)]


def batches_for(tokenizer: Any, texts: list[str], size: int) -> list[dict[str, torch.Tensor]]:
    tokenizer = tokenizer.eval()
    return [
        {k: v for k, v in tokenizer.encode_batch(texts[i : i + size]).items() if k != "truncated"}
        for i in range(0, len(texts), size)
    ]


def score(
    model: torch.nn.Module, batches: list[dict[str, torch.Tensor]], labels: np.ndarray
) -> dict[str, float]:
    with torch.inference_mode():
        model(batches[0])  # warm-up
        start = time.perf_counter()
        logits = torch.cat([model(b) for b in batches])
        seconds = time.perf_counter() - start
    accuracy = float((logits.argmax(-1).numpy() == labels).mean())
    return {"accuracy": round(accuracy, 4), "examples_per_s": round(len(labels) / seconds, 1)}


def write(report: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_distill.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        report["setting"],
        "",
        "| training set | arm | seed | accuracy | train s |",
        "|---|---|---:|---:|---:|",
    ]
    for r in report["runs"]:
        lines.append(
            f"| {r['fraction']:.0%} | {r['arm']} | {r['seed']} | {r['accuracy']:.4f} | {r['train_s']:.0f} |"
        )
    lines += ["", "| training set | arm | mean accuracy over seeds |", "|---|---|---:|"]
    for (fraction, arm), accs in summary(report["runs"]).items():
        lines.append(f"| {fraction:.0%} | {arm} | {np.mean(accs):.4f} (n={len(accs)}) |")
    if "speed" in report:
        s = report["speed"]
        lines += ["", "| model | parameters | accuracy | examples/s (CPU) |", "|---|---:|---:|---:|"]
        for name in ("teacher", "student"):
            acc = s[name].get("accuracy", float("nan"))
            lines.append(f"| {name} | {s[name]['parameters']:,} | {acc:.4f} | "
                         f"{s[name]['examples_per_s']:.0f} |")  # fmt: skip
    (out / "bench_distill.md").write_text("\n".join(lines) + "\n")


def summary(runs: list[dict[str, Any]]) -> dict[tuple[float, str], list[float]]:
    grouped: dict[tuple[float, str], list[float]] = {}
    for r in runs:
        grouped.setdefault((r["fraction"], r["arm"]), []).append(r["accuracy"])
    return grouped


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--teacher", required=True, help="the teacher's run folder (or a .ckpt in it)")
    parser.add_argument("--teacher_ckpt", default="best")
    parser.add_argument("--steps", type=int, default=300, help="optimizer steps of every student")
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument(
        "--examples", type=int, default=None, help="a seeded sample of the test split (default: all of it)"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "results" / "distill"))
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    out = Path(options.out)
    teacher = load_run(options.teacher, options.teacher_ckpt)
    options.vocabulary = teacher_vocabulary(teacher.datamodule)
    test = teacher.datamodule.load_splits()["test"]
    if options.examples is not None:
        test = test.select(np.sort(np.random.default_rng(0).permutation(len(test))[: options.examples]))
    picked = test
    texts, labels = list(picked["text"]), np.asarray(picked["label"])
    # The teacher reads the students' batches while distilling, so it is scored at their max_length too.
    # A pretrained family's tokenizer wraps the text tokenizer that does the cutting.
    getattr(teacher.tokenizer, "inner", teacher.tokenizer).max_length = options.max_length  # type: ignore[attr-defined]
    batches = batches_for(teacher.tokenizer, texts, 32)
    report: dict[str, Any] = {
        "setting": (
            f"IMDB; student `small` 2×128 at max_length {options.max_length}, batch 32, {options.steps} "
            f"optimizer steps per run, on the teacher's vocabulary "
            f"({' '.join(options.vocabulary[1::2]) or 'trained on IMDB'}); "
            f"teacher {teacher.config_path.parent} "
            f"({teacher.checkpoint_path.name}); accuracy on {len(labels)} test reviews; "
            f"{options.threads} CPU threads."
        ),
        "options": vars(options),
        "runs": [],
    }
    student = None
    for fraction in options.fractions:
        for seed in options.seeds:
            for arm in ("scratch", "distilled"):
                start = time.perf_counter()
                with tempfile.TemporaryDirectory() as root:
                    student = fit_student(arm, fraction, seed, options, root)
                seconds = time.perf_counter() - start
                result = {"fraction": fraction, "seed": seed, "arm": arm, "train_s": round(seconds, 1),
                          **score(student, batches, labels)}  # fmt: skip
                report["runs"].append(result)
                print(result, flush=True)
                write(report, out)
    assert student is not None
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    report["speed"] = {
        "teacher": {"parameters": count(teacher.model), **score(teacher.model, batches, labels)},
        "student": {"parameters": count(student), **score(student, batches, labels)},
        "load_average_at_end": os.getloadavg(),
    }
    write(report, out)


if __name__ == "__main__":
    main()
