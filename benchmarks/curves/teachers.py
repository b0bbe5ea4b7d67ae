"""The teacher behind a distilled arm: the arm's teacher config (MiniLM) fine-tuned on the labelled examples
of the very fraction its student trains on, so the teacher brings pretraining, never more labels than the
student has. One teacher per fraction, made once through `tabrasa fit` and reused on resume; its run card
is copied beside the curves' log, so the committed results name the teacher's command and accuracy.

The teacher trains a fixed budget, the fine-tuning recipe of BERT (Devlin et al. 2019: 2–4 epochs at
5e-5): EPOCHS epochs, but at least the protocol's `teacher_min_steps` steps, so a 10% teacher is not left
at a hundred steps. It is validated once, at its end, on the protocol's validation split (the student's,
never the test split), and reported by that validation accuracy: on a CPU, scoring a 22M-parameter
teacher on the 5,000 test reviews would cost as much as a student run, and no choice rests on it.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import torch

from benchmarks.curves.early_stopped_run import RunKey, Teacher, data_args
from benchmarks.curves.plan import Arm, Protocol
from tabrasa.io import atomic_write

EPOCHS = 2
BATCH_SIZE = 16  # the teacher config's own batch


def teacher_args(
    root: Path, arm: Arm, key: RunKey, protocol: Protocol, n_train: int, folder: Path
) -> list[str]:
    """`tabrasa fit` arguments of the fraction's teacher, its run under `folder`."""
    if arm.teacher is None:
        raise ValueError(f"arm {arm.name} names no teacher config")
    steps = max(protocol.teacher_min_steps, EPOCHS * math.ceil(n_train / BATCH_SIZE))
    args = ["fit", "--config", str(root / arm.teacher)]
    args += [
        "--seed_everything", "0",
        "--data.init_args.train_fraction", f"{key.fraction:g}",
        "--data.init_args.loader.num_workers", "0",
        "--trainer.max_epochs", "-1",
        "--trainer.max_steps", str(steps),
        "--trainer.val_check_interval", str(steps),
        "--trainer.check_val_every_n_epoch", "null",
        "--trainer.limit_val_batches", "1.0",
        "--trainer.enable_progress_bar", "false",
        "--trainer.logger.init_args.save_dir", str(folder),
        "--test_after_fit", "false",  # the teacher is judged on validation, like every choice here
    ]  # fmt: skip
    return args + data_args(protocol)  # the student's data: its limit, validation split, length


def fraction_size(root: Path, arm: Arm, key: RunKey, protocol: Protocol) -> int:
    """How many labelled examples the fraction holds (the student's data module, read without training)."""
    from tabrasa.training.lightning_cli import build_cli

    args = ["--config", str(root / arm.teacher), "--data.init_args.train_fraction", f"{key.fraction:g}"]
    cli = build_cli(args + data_args(protocol), run=False, save_config=False)
    return len(cli.datamodule.splits["train"])


def teacher_for(root: Path, folder: Path, arm: Arm, key: RunKey, protocol: Protocol) -> Teacher:
    """The fraction's teacher, fitted on first use; its run card lands in `folder`/f{fraction}.json."""
    home = folder / f"f{key.fraction:g}"
    card = folder / f"f{key.fraction:g}.json"
    runs = sorted(home.glob("*/version_*/checkpoints/best*.ckpt"))
    if not runs:
        n_train = fraction_size(root, arm, key, protocol)
        args = teacher_args(root, arm, key, protocol, n_train, home)
        env = {**os.environ, "OMP_NUM_THREADS": str(torch.get_num_threads())}  # the sweep's lane, no more
        print(f"teacher for f={key.fraction:g}: tabrasa {shlex.join(args)}", flush=True)
        subprocess.run([sys.executable, "-m", "tabrasa.cli", *args], cwd=root, env=env, check=True)
        runs = sorted(home.glob("*/version_*/checkpoints/best*.ckpt"))
        if not runs:
            raise RuntimeError(f"the teacher fit under {home} left no best checkpoint")
        run = runs[-1].parents[1]
        record = json.loads((run / "run_card.json").read_text())
        record["command"] = "tabrasa " + shlex.join(
            [a if not a.startswith(str(root)) else os.path.relpath(a, root) for a in args]
        )
        atomic_write(card, lambda tmp: tmp.write_text(json.dumps(record, indent=2) + "\n"))
    run = runs[-1].parents[1]
    return Teacher(run=str(run), outputs=str(home / "teacher_outputs.safetensors"))
