"""A curve run killed in the middle resumes where it stopped and ends exactly as an uninterrupted run."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytorch_lightning as pl

from benchmarks.curves.claims import Claims
from benchmarks.curves.early_stopped_run import (
    KEY_FIELDS,
    RunKey,
    run_args,
    run_folder,
    runs_folder_of_log,
    train_and_score,
)
from benchmarks.curves.plan import MODALITIES, Protocol
from benchmarks.curves.unfinished import unfinished_runs
from benchmarks.evidence.rate_sweep import RunLog

ROOT = Path(__file__).resolve().parents[2]
PLAN = MODALITIES["image"]
KEY = RunKey(modality="image", arm="transformer", fraction=1.0, lr=1e-3, seed=0)
# 4 epochs of 3 steps, no early stop (patience 10): the run is whole only at its cap
PROTOCOL = Protocol(fractions=(1.0,), max_epochs=4, patience=10, min_steps=1, patience_steps=1,
                    batch_size=16, width=16, rates=(1e-3,),
                    data={"limit": 48, "val_size": 24})  # fmt: skip
COMPARED = ("steps", "epochs", "stopped", "best_epoch", "evaluations", "converged", "val_acc", "test_acc")


class KilledError(RuntimeError):
    """What ends the process in these tests: a machine taken back in the middle of a run."""


class Kill(pl.Callback):
    """Raises at the end of epoch `epoch`, before that epoch's checkpoint is written (Lightning calls the
    checkpoint callbacks last): the epoch is lost, as a kill in its last batch would lose it."""

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.current_epoch == self.epoch:
            raise KilledError(f"killed after epoch {self.epoch}")


class EpochsTrained(pl.Callback):
    """How many epochs this process trained itself."""

    def __init__(self) -> None:
        self.count = 0

    def on_train_epoch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.count += 1


def run(folder: Path, *callbacks: pl.Callback) -> dict[str, Any]:
    return train_and_score(
        ROOT, PLAN.arm("transformer"), KEY, PROTOCOL, PLAN.permutation_flag,
        runs_folder=folder, callbacks=callbacks,
    )  # fmt: skip


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run(tmp_path_factory.mktemp("whole"))


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_checkpoint_and_ends_as_the_uninterrupted_run(
    tmp_path: Path, uninterrupted: dict[str, Any]
) -> None:
    with pytest.raises(KilledError):
        run(tmp_path, Kill(epoch=1))
    folder = run_folder(
        run_args(ROOT, PLAN.arm("transformer"), KEY, PROTOCOL, PLAN.permutation_flag), tmp_path, ROOT
    )
    assert (folder / "last.ckpt").is_file()  # what the killed process left
    log, claims = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS), Claims(tmp_path / "runs.jsonl", tmp_path / "c")
    [stopped] = unfinished_runs(tmp_path, log, claims)  # what `bench_curves --unfinished` lists
    assert (stopped.key, stopped.epoch, stopped.steps, stopped.segments) == (KEY, 0, 3, 1)
    assert stopped.trainer is None and "stopped; the sweep resumes it" in stopped.line()
    trained = EpochsTrained()
    resumed = run(tmp_path, trained)
    assert trained.count == 3  # epochs 1 to 3: epoch 0 came from the checkpoint
    assert resumed["segments"] == 2 and uninterrupted["segments"] == 1
    # the same batches and random numbers as the run that was never stopped
    assert {k: resumed[k] for k in COMPARED} == {k: uninterrupted[k] for k in COMPARED}
    assert resumed["stopped"] == "budget" and resumed["epochs"] == 4
    assert not folder.exists() and not unfinished_runs(tmp_path, log, claims)  # a scored run leaves nothing


@pytest.mark.slow
def test_counter_without_its_checkpoint_a_killed_run_starts_again_from_the_first_epoch(
    tmp_path: Path,
) -> None:
    with pytest.raises(KilledError):
        run(tmp_path, Kill(epoch=1))
    folder = run_folder(
        run_args(ROOT, PLAN.arm("transformer"), KEY, PROTOCOL, PLAN.permutation_flag), tmp_path, ROOT
    )
    (folder / "last.ckpt").unlink()
    log, claims = RunLog(tmp_path / "runs.jsonl", KEY_FIELDS), Claims(tmp_path / "runs.jsonl", tmp_path / "c")
    assert unfinished_runs(tmp_path, log, claims) == []  # nothing left to resume from
    trained = EpochsTrained()
    again = run(tmp_path, trained)
    assert trained.count == 4 and again["segments"] == 1


def test_a_run_resumes_only_into_the_same_arguments(tmp_path: Path) -> None:
    args = run_args(ROOT, PLAN.arm("transformer"), KEY, PROTOCOL, PLAN.permutation_flag)
    wider = run_args(ROOT, PLAN.arm("transformer"), KEY, replace(PROTOCOL, width=32), PLAN.permutation_flag)
    other_seed = run_args(
        ROOT, PLAN.arm("transformer"), replace(KEY, seed=1), PROTOCOL, PLAN.permutation_flag
    )
    assert run_folder(args, tmp_path, ROOT) == run_folder(list(args), tmp_path, ROOT)
    assert len({run_folder(a, tmp_path, ROOT) for a in (args, wider, other_seed)}) == 3
    assert run_folder(args, tmp_path, ROOT).parent == tmp_path


def test_a_carried_run_folder_resumes_in_a_checkout_elsewhere(tmp_path: Path) -> None:
    here = run_args(ROOT, PLAN.arm("transformer"), KEY, PROTOCOL, PLAN.permutation_flag)
    elsewhere = tmp_path / "another-checkout"
    shutil.copytree(ROOT / "configs", elsewhere / "configs")  # its configs, as a checkout there has them
    there = run_args(elsewhere, PLAN.arm("transformer"), KEY, PROTOCOL, PLAN.permutation_flag)
    assert here != there  # the configs' absolute paths differ
    assert run_folder(here, tmp_path, ROOT) == run_folder(there, tmp_path, elsewhere)
    # counter: read against the wrong checkout, the same arguments name another folder
    assert run_folder(there, tmp_path, ROOT) != run_folder(here, tmp_path, ROOT)


def test_unfinished_runs_wait_in_the_cache_which_outlives_the_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tempfile

    from benchmarks.bench_curves import main as bench_curves_main

    monkeypatch.setenv("TABRASA_CACHE", str(tmp_path / "cache"))
    log = tmp_path / "curves" / "runs.jsonl"
    folder = runs_folder_of_log(log)
    assert folder.is_relative_to(tmp_path / "cache")  # a reboot empties /tmp; hours of a run must survive it
    assert not folder.is_relative_to(tempfile.gettempdir())
    assert runs_folder_of_log(log) == folder != runs_folder_of_log(tmp_path / "other" / "runs.jsonl")
    for runs_folder, flag in ((folder, []), (tmp_path / "given", ["--runs-folder", str(tmp_path / "given")])):
        bench_curves_main(["--unfinished", "--out", str(log.parent), *flag])
        assert capsys.readouterr().out.strip() == f"0 unfinished runs in {runs_folder}"
