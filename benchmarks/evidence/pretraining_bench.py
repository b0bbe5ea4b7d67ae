"""Does self-pretraining close the transformer's gap to a model with an inductive bias at small data?

Amos et al. (ICLR 2024, "Never Train from Scratch") found that masked modelling on the downstream task's
own inputs closes most of the gap between transformers and models with built-in biases on Long Range
Arena. Per task and labelled fraction, four arms fine-tune the task's shipped config for the same steps:

  scratch   the transformer from random weights;
  self      the transformer after masked modelling on the *same* labelled fraction's training inputs
            (`InputsOf`, labels dropped), with the task's pretraining preset (objective, optimiser, steps);
  larger    the transformer after the shipped pretraining preset on its larger unlabelled set
            (every Fashion-MNIST training image; IMDB + Rotten Tomatoes text; UniProt minus PSORTb);
  cnn       the inductive-bias baseline (GridCNN on the patch grid, SequenceCNN on residues and words)
            behind the same tokenizer and head, from random weights.

Each arm's learning rate is chosen on validation at the first seed (`rate_sweep`); the other seeds run
at that rate and vary initialisation and data order of the fine-tuning. A pretraining run is one per
(task, source, fraction), made at the first seed and shared by every fine-tuning of it: the seeds measure
fine-tuning noise, not pretraining noise. Its loop seconds count in every arm's total compute.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.evidence.arms import backbone_file
from benchmarks.evidence.cli_run import fit_and_score, loop_seconds, quiet_lightning, trained
from benchmarks.evidence.rate_sweep import RunLog, arm_result, check_bracket, print_run, run_arm

ARMS = ("scratch", "self", "larger", "cnn")
PRETRAINED_ARMS = {"self": "self", "larger": "larger"}  # arm → pretraining source
ESM = "tabrasa.tokenizers.esm.EsmProteinTokenizer"


@dataclass(frozen=True, kw_only=True)
class PretrainingTask:
    """config: the task's shipped config. pretrain: the pretraining preset whose objective, optimiser and
    steps both pretrained arms use. baseline: the inductive-bias backbone under configs/backbone/.
    data_overrides: data settings every arm shares, so only the weights differ between arms (PSORTb uses
    the ESM alphabet of the protein preset). vocabulary_from_export: the larger arm's text vocabulary is
    the pretraining run's own, so the fine-tune reads it from the export folder."""

    name: str
    config: str
    pretrain: str
    baseline: str
    data_overrides: tuple[tuple[str, str], ...] = ()
    vocabulary_from_export: bool = False


PRETRAINING_TASKS = {
    "fashion_mnist": PretrainingTask(
        name="fashion_mnist",
        config="configs/image/fashion_mnist.yaml",
        pretrain="configs/pretrain/image.yaml",
        baseline="grid_cnn",
    ),
    "psortb": PretrainingTask(
        name="psortb",
        config="configs/protein/psortb.yaml",
        pretrain="configs/pretrain/protein.yaml",
        baseline="sequence_cnn",
        data_overrides=(("tokenizer.class_path", ESM),),
    ),
    "imdb": PretrainingTask(
        name="imdb",
        config="configs/text/imdb.yaml",
        pretrain="configs/pretrain/text.yaml",
        baseline="sequence_cnn",
        vocabulary_from_export=True,
    ),
}


@dataclass(frozen=True, kw_only=True)
class PretrainingBudget:
    """learning_rates: each arm's fine-tuning sweep. seeds: the first chooses the rate and makes the
    pretraining runs. fractions: of each labelled training set. finetune_steps: optimizer steps of every
    fine-tuning run. pretrain_steps: None runs each preset's own step count (its shipped budget), a number
    overrides it. limit: examples per split (smoke tests only). bracket: rates the sweep may add beyond
    an end of `learning_rates` (`rate_sweep.swept_rates`). backbone_args: CLI overrides of the pretrained
    backbone (a learning-curve plan's width), so that its export fits the arm that fine-tunes it."""

    learning_rates: tuple[float, ...]
    seeds: tuple[int, ...]
    fractions: tuple[float, ...]
    finetune_steps: int
    pretrain_steps: int | None
    limit: int | None = None
    bracket: int = 0
    backbone_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        name = type(self).__name__
        if not self.learning_rates or min(self.learning_rates) <= 0:
            raise ValueError(f"{name}.learning_rates={self.learning_rates}: give at least one rate > 0")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"{name}.seeds={self.seeds}: give at least one seed, each once")
        if not self.fractions or not all(0 < f <= 1 for f in self.fractions):
            raise ValueError(f"{name}.fractions={self.fractions}: give fractions in (0, 1]")
        if self.finetune_steps < 1 or (self.pretrain_steps is not None and self.pretrain_steps < 1):
            raise ValueError(f"{name}: finetune_steps and pretrain_steps must be >= 1")
        check_bracket(self)


PRETRAINING_BUDGETS = {
    "smoke": PretrainingBudget(
        learning_rates=(1e-3,), seeds=(0,), fractions=(0.5,), finetune_steps=2, pretrain_steps=2, limit=32
    ),
    # CPU: fine-tuning is 300 steps, short of each preset's full schedule (7 epochs of Fashion-MNIST's 10%,
    # 10 of PSORTb's); pretraining is each preset as shipped. The two rates hold every task preset's own
    # (3e-3 Fashion-MNIST, 1e-3 PSORTb and IMDB).
    "quick": PretrainingBudget(
        learning_rates=(1e-3, 3e-3),
        seeds=(0, 1),
        fractions=(0.1, 1.0),
        finetune_steps=300,
        pretrain_steps=None,
    ),
    "full": PretrainingBudget(
        learning_rates=(1e-4, 3e-4, 1e-3, 3e-3),
        seeds=(0, 1, 2),
        fractions=(0.01, 0.1, 1.0),
        finetune_steps=5000,
        pretrain_steps=20000,
    ),
}


@dataclass(frozen=True, kw_only=True)
class PretrainingKey:
    task: str
    fraction: float
    arm: str
    lr: float
    seed: int


@dataclass(frozen=True, kw_only=True)
class PretrainRunKey:
    """One pretraining run; the larger source does not depend on the fraction (logged as 0)."""

    task: str
    source: str
    fraction: float


KEY_FIELDS = tuple(PretrainingKey.__dataclass_fields__)
PRETRAIN_KEY_FIELDS = tuple(PretrainRunKey.__dataclass_fields__)


def load_config(root: Path, path: str) -> dict[str, Any]:
    """A shipped config with its shared backbone inlined, so a copy written elsewhere stands alone."""
    config = yaml.safe_load((root / path).read_text())
    backbone = config["model"]["init_args"]["backbone"]
    if isinstance(backbone, str):
        config["model"]["init_args"]["backbone"] = yaml.safe_load(
            (root / path).parent.joinpath(backbone).read_text()
        )
    return config


def task_data(root: Path, task: PretrainingTask, fraction: float, limit: int | None) -> dict[str, Any]:
    """The task's data block at `fraction` of its labels, with the shared data overrides: the very
    examples its fine-tuning sees, so self-pretraining reads exactly that fraction's inputs."""
    data = load_config(root, task.config)["data"]
    args = data["init_args"]
    args |= {"train_fraction": fraction, "seed": 0}  # one labelled subset for every seed and arm
    if limit is not None:
        args["limit"] = limit
    for dotted, value in task.data_overrides:
        *parents, leaf = dotted.split(".")
        node = args
        for part in parents:
            node = node[part]
        node[leaf] = yaml.safe_load(value)  # the CLI's string, typed as YAML reads it ("5000" → 5000)
    return data


def pretraining_config(
    root: Path, task: PretrainingTask, source: str, fraction: float, budget: PretrainingBudget
) -> dict[str, Any]:
    """The task's pretraining preset; for `self`, its data replaced by the labelled fraction's inputs."""
    config = load_config(root, task.pretrain)
    config["trainer"].pop("logger", None)
    if source == "self":
        loader = config["data"]["init_args"]["loader"]
        config["data"] = {
            "class_path": "tabrasa.data.unlabelled.InputsOf",
            "init_args": {"source": task_data(root, task, fraction, budget.limit), "loader": loader},
        }
    elif budget.limit is not None:
        config["data"]["init_args"]["limit"] = budget.limit
    return config


class Pretrainings:
    """The pretraining runs of a sweep: one export folder and one log line per (task, source, fraction);
    the larger source does not depend on the fraction, so it is made once per task (fraction 0 in the log).
    A killed sweep finds finished exports in `folder` and does not pretrain again."""

    def __init__(self, root: Path, folder: Path, budget: PretrainingBudget) -> None:
        self.root = root
        self.folder = folder
        self.budget = budget
        self.log = RunLog(folder / "pretraining.jsonl", PRETRAIN_KEY_FIELDS)

    def get(self, task: PretrainingTask, source: str, fraction: float) -> dict[str, Any]:
        key = PretrainRunKey(task=task.name, source=source, fraction=fraction if source == "self" else 0.0)
        found = self.log.get(key)
        if found is not None and Path(found["export"]).is_dir():
            return found
        export = self.folder / f"{task.name}-{source}-{key.fraction:g}"
        config = pretraining_config(self.root, task, source, fraction, self.budget)
        config["model"]["init_args"]["export_dir"] = str(export)
        config["seed_everything"] = self.budget.seeds[0]
        steps = self.budget.pretrain_steps or int(config["trainer"]["max_steps"])
        overrides = ["--trainer.max_steps", str(steps), *self.budget.backbone_args]
        with tempfile.TemporaryDirectory(prefix="tabrasa-pretrain-") as scratch:
            path = Path(scratch) / "config.yaml"
            path.write_text(yaml.safe_dump(config, sort_keys=False))
            with trained(path, overrides) as (cli, fit_seconds):
                run = {**asdict(key), "export": str(export), "steps": int(cli.trainer.global_step)}
                run |= {"loop_seconds": round(loop_seconds(cli), 1), "fit_seconds": round(fit_seconds, 1)}
        self.log.add(run)
        print(f"pretrained {task.name} on {source} (fraction {key.fraction:g}): {run}", flush=True)
        return run


def finetune_args(
    root: Path, task: PretrainingTask, key: PretrainingKey, budget: PretrainingBudget, export: str | None
) -> list[str]:
    args = [
        "--model.init_args.optimizer.lr", str(key.lr),
        "--seed_everything", str(key.seed),
        "--data.init_args.seed", "0",
        "--data.init_args.train_fraction", str(key.fraction),
        "--trainer.max_steps", str(budget.finetune_steps),
    ]  # fmt: skip
    if budget.limit is not None:
        args += ["--data.init_args.limit", str(budget.limit)]
    for dotted, value in task.data_overrides:
        args += [f"--data.init_args.{dotted}", value]
    if key.arm == "cnn":
        args += ["--model.init_args.backbone", str(backbone_file(root, task.baseline))]
    if export is not None:
        args += ["--model.init_args.pretrained", json.dumps({"family": "tabrasa", "path": export})]
        if task.vocabulary_from_export and key.arm == "larger":
            args += ["--data.init_args.tokenizer.init_args.path", export]
    return args


def run_pretraining_bench(
    root: Path, names: list[str], budget: PretrainingBudget, log: RunLog, echo: bool = True
) -> None:
    """Run what is missing: per task and fraction, every arm's rate sweep and seeds (pretraining first
    where an arm needs it). Tasks outermost, then fractions, so a partial sweep has whole tasks."""
    quiet_lightning()
    pretrainings = Pretrainings(root, log.path.parent / "pretrained", budget)

    def train(key: Any) -> dict[str, Any]:
        task = PRETRAINING_TASKS[key.task]
        pre = None
        if key.arm in PRETRAINED_ARMS:
            pre = pretrainings.get(task, PRETRAINED_ARMS[key.arm], key.fraction)
        args = finetune_args(root, task, key, budget, pre["export"] if pre else None)
        scores = fit_and_score(root / task.config, args)
        pre_seconds = float(pre["loop_seconds"]) if pre else 0.0
        return scores | {
            "pretrain_seconds": pre_seconds,
            "total_seconds": round(pre_seconds + float(scores["train_seconds"]), 1),
        }

    for name in names:
        for fraction in budget.fractions:
            for arm in ARMS:
                placeholder = PretrainingKey(task=name, fraction=fraction, arm=arm, lr=0.0, seed=0)
                run_arm(placeholder, budget, log, train, print_run if echo else None)


@dataclass(frozen=True, kw_only=True)
class PretrainingCell:
    """One arm of one (task, fraction) at its chosen rate."""

    task: str
    fraction: float
    arm: str
    best_lr: float
    val_acc: float  # first seed, chosen rate: what chose it
    test_mean: float
    test_std: float
    seeds: int
    params: int
    pretrain_seconds: float
    finetune_seconds: float  # mean over seeds
    total_seconds: float


def summarise_pretraining_bench(
    log: RunLog, names: list[str], budget: PretrainingBudget
) -> list[PretrainingCell]:
    cells = []
    for name in names:
        for fraction in budget.fractions:
            for arm in ARMS:
                key = PretrainingKey(task=name, fraction=fraction, arm=arm, lr=0.0, seed=0)
                result = arm_result(key, budget, log)
                if result is None:
                    continue
                runs = result.runs
                finetune = sum(float(r["train_seconds"]) for r in runs) / len(runs)
                pre = float(runs[0]["pretrain_seconds"])
                cells.append(
                    PretrainingCell(
                        task=name,
                        fraction=fraction,
                        arm=arm,
                        best_lr=result.lr,
                        val_acc=float(runs[0]["val_acc"]),
                        test_mean=result.test_mean,
                        test_std=result.test_std,
                        seeds=len(runs),
                        params=int(runs[0]["params"]),
                        pretrain_seconds=pre,
                        finetune_seconds=round(finetune, 1),
                        total_seconds=round(pre + finetune, 1),
                    )
                )
    return cells
