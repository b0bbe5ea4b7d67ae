"""The permutation test (Perceiver, Jaegle et al. 2021): how much does each model lean on the order and
locality it assumes? Perceiver's figure: one fixed permutation of ImageNet's pixels drops ResNet-50 from
73.5% to 39.4% top-1 and leaves the Perceiver unchanged.

One fixed permutation (seed `PERMUTATION_SEED`), the same in training and test, at two levels:

  token    the token sequence the backbone sees (`TokenTask.permute_tokens`), in all four modalities. A
           transformer with learned positions is invariant by construction (`INVARIANCE_TEST`), so only
           the baselines run: SequenceCNN and SequenceLSTM on text and protein, GridCNN on image and audio.
  element  the raw elements inside the tokenizer (`permute_elements_seed`): image pixels before patching,
           spectrogram cells before framing. A patch then mixes far-apart pixels, so no arm is invariant:
           the transformer (small) and GridCNN both run, on image and audio.

Every arm (modality, backbone, permutation) runs the rate protocol of `rate_sweep`: every rate at the first
seed, the rate with the best validation accuracy chosen, the other seeds at that rate; test accuracy is
read only for the report. The unpermuted run of a backbone is one arm shared by both levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchmarks.evidence.arms import backbone_file
from benchmarks.evidence.cli_run import fit_and_score, quiet_lightning
from benchmarks.evidence.intervals import mean_interval
from benchmarks.evidence.rate_sweep import Budget, RunLog, arm_result, print_run, run_arm

PERMUTATION_SEED = 0  # the one permutation every permuted run uses; run seeds vary init and data order
TRANSFORMER = "small"
INVARIANCE_TEST = "benchmarks/tests/test_permutation.py::test_learned_positions_make_the_transformer_invariant_to_token_order"  # noqa: E501
Permutation = Literal["none", "token", "element"]
LEVELS: tuple[Permutation, ...] = ("token", "element")


@dataclass(frozen=True, kw_only=True)
class PermutationTask:
    """config: the modality's shipped config. token_arms: backbones run with permuted tokens (the
    transformer is invariant there). element_arms: backbones run with permuted elements; element_flag: the
    override that sets the tokenizer's permute_elements_seed (empty: the modality has no element level).
    quick_data: CPU-sized data overrides of the quick and smoke modes."""

    name: str
    config: str
    token_arms: tuple[str, ...]
    element_arms: tuple[str, ...] = ()
    element_flag: str = ""
    quick_data: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if TRANSFORMER in self.token_arms:
            raise ValueError(
                f"PermutationTask {self.name!r}: the transformer is invariant to token order by construction "
                f"({INVARIANCE_TEST}); list only baselines in token_arms"
            )
        if bool(self.element_arms) != bool(self.element_flag):
            raise ValueError(f"PermutationTask {self.name!r}: element_arms and element_flag come together")

    def arms(self, level: Permutation) -> tuple[str, ...]:
        return self.token_arms if level == "token" else self.element_arms


PERMUTATION_TASKS = {
    "text": PermutationTask(
        name="text",
        config="configs/text/imdb.yaml",
        token_arms=("sequence_cnn", "sequence_lstm"),
        quick_data=(("tokenizer.init_args.max_length", "128"),),
    ),
    "image": PermutationTask(
        name="image",
        config="configs/image/fashion_mnist.yaml",
        token_arms=("grid_cnn",),
        element_arms=(TRANSFORMER, "grid_cnn"),
        element_flag="--data.init_args.tokenizer.init_args.permute_elements_seed",
    ),
    "audio": PermutationTask(
        name="audio",
        config="configs/audio/keywords.yaml",
        token_arms=("grid_cnn",),
        element_arms=(TRANSFORMER, "grid_cnn"),
        # 1-second clips: 101 frames, no padding
        element_flag="--data.init_args.tokenizer.init_args.permute_elements_seed",
    ),
    "protein": PermutationTask(
        name="protein",
        config="configs/protein/psortb.yaml",
        token_arms=("sequence_cnn", "sequence_lstm"),
        quick_data=(("tokenizer.init_args.max_length", "128"),),
    ),
}


PERMUTATION_BUDGETS = {
    "smoke": Budget(learning_rates=(1e-3,), seeds=(0,), steps=2, batch_size=8, limit=24, quick=True),
    # Sized for an hour on one CPU thread: 18 arms × (2 rates + 2 more seeds) = 72 runs of 300 steps, most
    # of it the 32 CNN and LSTM runs over texts and proteins, cut to 128 tokens as the learning-curve quick
    # mode cuts text; 1,000 examples per split keep scoring (the whole validation and test split) short.
    "quick": Budget(
        learning_rates=(1e-3, 3e-3), seeds=(0, 1, 2), steps=300, batch_size=32, limit=1000, quick=True
    ),
    "full": Budget(
        learning_rates=(3e-4, 1e-3, 3e-3),
        seeds=(0, 1, 2, 3, 4),
        steps=3000,
        batch_size=64,
        limit=None,
        quick=False,
        bracket=1,
    ),
}


@dataclass(frozen=True, kw_only=True)
class PermutationKey:
    modality: str
    arm: str
    permutation: Permutation
    lr: float
    seed: int


KEY_FIELDS = tuple(PermutationKey.__dataclass_fields__)


def arms_of(task: PermutationTask) -> list[PermutationKey]:
    """Every arm of a task with placeholder rate and seed, unpermuted first; the unpermuted run of a
    backbone serves both levels."""
    keys: dict[tuple[str, Permutation], None] = {}
    for level in LEVELS:
        for arm in task.arms(level):
            keys[(arm, "none")] = None
    for level in LEVELS:
        for arm in task.arms(level):
            keys[(arm, level)] = None
    return [PermutationKey(modality=task.name, arm=a, permutation=p, lr=0.0, seed=0) for a, p in keys]


def cli_args(root: Path, task: PermutationTask, key: PermutationKey, budget: Budget) -> list[str]:
    """Overrides of the task's config for one run (fit_and_score adds the quiet trainer flags)."""
    args = [
        "--model.init_args.backbone", str(backbone_file(root, key.arm)),
        *budget.cli_args(key.lr, key.seed),  # rate, seed, batch, steps, limit; one split for every run
    ]  # fmt: skip
    if budget.quick:
        args += ["--data.init_args.loader.num_workers", "0"]
        for dotted, value in task.quick_data:
            args += [f"--data.init_args.{dotted}", value]
    if key.permutation == "token":
        args += ["--model.init_args.permute_tokens.seed", str(PERMUTATION_SEED)]
    elif key.permutation == "element":
        args += [task.element_flag, str(PERMUTATION_SEED)]
    return args


def run_permutation_bench(
    root: Path, names: list[str], budget: Budget, log: RunLog, echo: bool = True
) -> None:
    """Run what is missing, task by task, so a partial sweep has whole tasks."""
    quiet_lightning()

    def train(key: Any) -> dict[str, Any]:
        task = PERMUTATION_TASKS[key.modality]
        return fit_and_score(root / task.config, cli_args(root, task, key, budget))

    for name in names:
        for arm in arms_of(PERMUTATION_TASKS[name]):
            run_arm(arm, budget, log, train, print_run if echo else None)


@dataclass(frozen=True, kw_only=True)
class PermutationRecord:
    """One row: a backbone at one level, permuted or not, at its chosen rate. test_mean and half_width
    (the 95% t interval over seeds) are None for a row stated by construction, not run (see `note`)."""

    modality: str
    level: Permutation
    arm: str
    permuted: bool
    best_lr: float | None
    test_mean: float | None
    half_width: float | None
    seeds: int
    note: str = ""


def _record(log: RunLog, budget: Budget, key: PermutationKey, level: Permutation) -> Any:
    result = arm_result(key, budget, log)
    if result is None:
        return None
    interval = mean_interval([float(r["test_acc"]) for r in result.runs])
    return PermutationRecord(
        modality=key.modality,
        level=level,
        arm=key.arm,
        permuted=key.permutation != "none",
        best_lr=result.lr,
        test_mean=interval.mean,
        half_width=interval.half_width,
        seeds=interval.n,
    )


def invariant_transformer(modality: str) -> PermutationRecord:
    """The transformer's token-level row: stated by its exact test, not measured."""
    note = f"invariant by construction (learned positions), not run: {INVARIANCE_TEST}"
    return PermutationRecord(
        modality=modality, level="token", arm=TRANSFORMER, permuted=True, best_lr=None, test_mean=None,
        half_width=None, seeds=0, note=note,
    )  # fmt: skip


def summarise_permutation_bench(log: RunLog, names: Sequence[str], budget: Budget) -> list[PermutationRecord]:
    """Per task and level, each backbone unpermuted then permuted (arms whose sweep has not finished are
    left out); at the token level, the transformer's row is the invariance test, not a run."""
    records = []
    for name in names:
        task = PERMUTATION_TASKS[name]
        for level in LEVELS:
            if not task.arms(level):
                continue
            if level == "token":
                records.append(invariant_transformer(name))
            for arm in task.arms(level):
                for permutation in ("none", level):
                    key = PermutationKey(modality=name, arm=arm, permutation=permutation, lr=0.0, seed=0)
                    record = _record(log, budget, key, level)
                    if record is not None:
                        records.append(record)
    return records
