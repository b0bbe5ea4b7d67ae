"""One run of the data-using protocol through the CLI a user types: the arm's task config, one fraction,
seed and rate; trained in epochs, validated every epoch, stopped by Lightning's EarlyStopping on the
validation accuracy, and scored on the whole test split with the best-validation checkpoint.

A run records what it cost and why it ended: steps, epochs, wall seconds, `stopped` (`early` when
patience ran out, `budget` when the epoch cap did), the epoch of its best validation, `converged`
(False when the best validation was the last one: more epochs might have helped) and `val_majority`,
the validation split's majority-class share (a constant guess's score). A continuous-depth
backbone's record adds what its solver cost: `nfe`, the evaluations of f in its last forward solve, and
`nfe_total`, every evaluation over the run (training, validation and test).

A run keeps its checkpoints in a folder of its own that outlives the process (`run_folder`): a run killed
in the middle (a machine held for a fixed time) resumes from its last checkpoint when the sweep reaches it
again, through tabrasa's exact resume (`ResumeCheckpoint`, `ResumeState`: the same batches and random
numbers as an uninterrupted run) and `FitClock`, which carries the seconds of the processes before.
`segments` says how many processes trained it; training after its last checkpoint is lost and uncounted.
The folder is removed once the run is scored. Without this, a run longer than the time a machine is held
(the spectrogram CNN's smallest fraction, 2.2 hours on one core) could never finish on a CPU."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping
from torch import nn

from benchmarks.curves.claims import log_digest
from benchmarks.curves.plan import Arm, Protocol, width_key
from benchmarks.evidence.cli_run import quiet_lightning
from benchmarks.evidence.majority import majority_share
from tabrasa.backbone.ode_depth import nfe_metrics
from tabrasa.data.cache import cache_root
from tabrasa.training.best_checkpoint import BestCheckpoint
from tabrasa.training.checkpointing import ResumeCheckpoint, ResumeState
from tabrasa.training.fit_clock import FitClock
from tabrasa.training.lightning_cli import build_cli

MONITOR = "val/acc"
KEY_FILE = "run.json"  # in a run's folder: which run it is, for `bench_curves --unfinished`
CHECKPOINT_MINUTES = 10.0  # last.ckpt mid-epoch too, not only at epoch ends (a long epoch)


@dataclass(frozen=True, kw_only=True)
class RunKey:
    modality: str
    arm: str
    fraction: float
    lr: float
    seed: int
    permuted: bool = False


KEY_FIELDS = tuple(RunKey.__dataclass_fields__)


class ValidationHistory(pl.Callback):
    """(epoch, step, val/acc) of every validation after the sanity check, in order."""

    def __init__(self) -> None:
        self.scores: list[tuple[int, int, float]] = []

    def state_dict(self) -> dict[str, Any]:  # in every checkpoint: a resumed run keeps its history
        return {"scores": [list(score) for score in self.scores]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.scores = [(int(e), int(s), float(v)) for e, s, v in state_dict["scores"]]

    def on_validation_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.sanity_checking or MONITOR not in trainer.callback_metrics:
            return
        self.scores.append(
            (trainer.current_epoch, trainer.global_step, float(trainer.callback_metrics[MONITOR]))
        )


@dataclass(frozen=True, kw_only=True)
class Teacher:
    """A distilled arm's teacher: its run folder and the file keeping its outputs by input."""

    run: str
    outputs: str


def solver_cost(backbone: nn.Module) -> dict[str, int]:
    """A continuous-depth backbone's function evaluations ({} for any other): this family's cost, which
    seconds alone hide when an adaptive solver takes more steps as training goes on."""
    metrics = nfe_metrics(backbone)
    return {"nfe": int(metrics["nfe"]), "nfe_total": int(metrics["nfe_total"])} if metrics else {}


def data_args(protocol: Protocol) -> list[str]:
    """The protocol's data settings as CLI overrides (a limit per split, the validation size, a length)."""
    return [arg for name, value in protocol.data.items() for arg in (f"--data.init_args.{name}", str(value))]


def run_args(
    root: Path,
    arm: Arm,
    key: RunKey,
    protocol: Protocol,
    permutation_flag: str,
    export: str | None = None,
    teacher: Teacher | None = None,
) -> list[str]:
    """The CLI arguments of one run (the same a user would type after `tabrasa fit`); `export`: the
    tabrasa checkpoint a self-pretrained arm fine-tunes; `teacher`: a distilled arm's teacher."""
    args = ["--config", str(root / arm.config)]
    for layer in arm.layers:
        args += ["--config", str(root / layer)]
    if arm.backbone is not None:
        args += ["--model.init_args.backbone", str(root / "configs" / "backbone" / arm.backbone)]
    args += [
        f"--model.init_args.backbone.init_args.{width_key(root, arm)}", str(protocol.width),
        "--seed_everything", str(key.seed),
        "--data.init_args.train_fraction", f"{key.fraction:g}",
        "--data.init_args.loader.batch_size", str(protocol.batch_size),
        "--trainer.max_epochs", str(protocol.max_epochs),
        "--trainer.max_steps", "-1",
        "--trainer.val_check_interval", "1.0",
        "--trainer.check_val_every_n_epoch", "1",
        "--trainer.limit_val_batches", "1.0",
        "--trainer.num_sanity_val_steps", "0",
        "--trainer.logger", "false",
        "--trainer.enable_progress_bar", "false",
        "--trainer.enable_model_summary", "false",
        "--trainer.callbacks", "[]",
    ]  # fmt: skip
    if key.lr > 0:  # a floor (lr 0) trains no network: the config's rate stays, unused
        args += ["--model.init_args.optimizer.lr", f"{key.lr:g}"]
    args += data_args(protocol)
    if arm.pretrain is not None:
        if export is None:
            raise ValueError(f"{key}: the self-pretrained arm needs its pretraining export")
        args += ["--model.init_args.pretrained", json.dumps({"family": "tabrasa", "path": export})]
    if arm.teacher is not None:
        if teacher is None:
            raise ValueError(f"{key}: the distilled arm needs its teacher run")
        args += ["--model.init_args.teacher", teacher.run, "--model.init_args.teacher_cache", teacher.outputs]
    if key.permuted:
        if not permutation_flag:
            raise ValueError(f"{key.modality}: no element permutation for this modality (permutation_flag)")
        args += [permutation_flag, "0"]  # one fixed permutation, the same in training and test
    return args


def runs_folder_of_log(log_path: Path) -> Path:
    """Where a sweep writing `log_path` keeps its unfinished runs' checkpoints: in tabrasa's cache
    ($TABRASA_CACHE, default ~/.cache/tabrasa), keyed by the log's absolute path. Not the system's temporary
    folder, as the claims are: a reboot or a fresh loan of a machine empties /tmp, and with it hours of
    training of a run longer than the machine is held; a claim is only worth as much as its live pid."""
    return cache_root() / "curve-runs" / log_digest(log_path)


def run_folder(args: list[str], under: Path, root: Path) -> Path:
    """Where the run of these CLI arguments keeps its checkpoints under `under` until it is scored, named
    by the arguments themselves: a run resumes only into the same arm, key and protocol, and a changed
    protocol starts afresh. The name reads the arguments relative to the checkout `root`, so a folder
    carried to a checkout elsewhere (another machine's disk) still resumes there. The sweep's `under` is
    `runs_folder_of_log(log)` or `--runs-folder`."""
    named = "\n".join(arg.replace(str(root), "<root>") for arg in args)
    return under / hashlib.sha1(named.encode()).hexdigest()[:16]


def train_and_score(
    root: Path,
    arm: Arm,
    key: RunKey,
    protocol: Protocol,
    permutation_flag: str,
    export: str | None = None,
    teacher: Teacher | None = None,
    *,
    runs_folder: Path,
    callbacks: Sequence[pl.Callback] = (),
) -> dict[str, Any]:
    """Run one key, resuming it where an earlier process left it; returns its record (the key's fields
    included). `runs_folder`: where unfinished runs keep their checkpoints (see `run_folder`);
    `callbacks`: added to the trainer's (a test stops a run with one)."""
    quiet_lightning()
    clock = FitClock()
    clock.start()  # before data set-up, as `tabrasa fit` starts it
    args = run_args(root, arm, key, protocol, permutation_flag, export, teacher)
    folder = run_folder(args, runs_folder, root)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / KEY_FILE).write_text(json.dumps({name: getattr(key, name) for name in KEY_FIELDS}))
    last = folder / f"{ResumeCheckpoint.CHECKPOINT_NAME_LAST}{ResumeCheckpoint.FILE_EXTENSION}"
    resume_from = str(last) if last.is_file() else None
    # The folder holds the run's key file, and a killed run's checkpoints: what it is for.
    warnings.filterwarnings("ignore", message=r"Checkpoint directory .* exists and is not empty")
    cli = build_cli(
        [*args, "--checkpoint.dirpath", str(folder), "--checkpoint.every_minutes", str(CHECKPOINT_MINUTES)],
        run=False,
        trainer_defaults_override={"callbacks": [], "default_root_dir": str(folder)},
        save_config=False,
    )
    cli.datamodule.setup("fit")
    per_epoch = math.ceil(len(cli.datamodule.splits["train"]) / protocol.batch_size)
    cap = max(protocol.max_epochs, math.ceil(protocol.min_steps / per_epoch))
    cli.trainer.fit_loop.max_epochs = cap
    patience = max(protocol.patience, math.ceil(protocol.patience_steps / per_epoch))
    history = ValidationHistory()
    stopper = EarlyStopping(monitor=MONITOR, mode="max", patience=patience)
    best = BestCheckpoint(dirpath=str(folder))
    cli.trainer.callbacks.extend([history, stopper, best, ResumeState(), clock, *callbacks])
    cli.trainer.fit(cli.model, datamodule=cli.datamodule, ckpt_path=resume_from)
    # Read before the test: restoring the best checkpoint also restores these callbacks' states.
    fit_seconds, segments = clock.earlier.fit_seconds + clock.this_process()[0], clock.earlier.segments + 1
    validations = list(history.scores)
    tested = time.perf_counter()
    test = cli.trainer.test(
        cli.model, datamodule=cli.datamodule, ckpt_path=best.best_model_path, verbose=False
    )
    test_seconds = time.perf_counter() - tested
    shutil.rmtree(folder, ignore_errors=True)
    data = cli.datamodule
    scores = [score for _, _, score in validations]
    best_index = max(range(len(scores)), key=lambda i: (scores[i], -i)) if scores else -1
    return {
        **{name: getattr(key, name) for name in KEY_FIELDS},
        "n_train": len(data.splits["train"]),
        "n_val": len(data.splits["validation"]),
        "n_test": len(data.splits["test"]),
        "steps": int(cli.trainer.global_step),
        "epochs": int(cli.trainer.current_epoch),
        "stopped": "budget" if cli.trainer.current_epoch >= cap else "early",
        "epoch_cap": cap,
        "patience": patience,
        "best_epoch": validations[best_index][0] if scores else None,
        "evaluations": len(scores),
        "converged": bool(scores) and best_index != len(scores) - 1,
        "val_acc": scores[best_index] if scores else float("nan"),
        "val_majority": majority_share(data.splits["validation"]["label"]),
        "test_acc": float(test[0]["test/acc"]),
        "params": sum(p.numel() for p in cli.model.backbone.parameters()),
        **solver_cost(cli.model.backbone),
        "segments": segments,
        "fit_seconds": round(fit_seconds, 2),
        "seconds": round(fit_seconds + test_seconds, 2),
    }
