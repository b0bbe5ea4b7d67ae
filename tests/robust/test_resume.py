"""A run killed by SIGKILL mid-epoch resumes from last.ckpt and ends with the uninterrupted run's weights."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import torch

from tabrasa.training import EpochSampler, ResumableLoader
from tests.robust.conftest import REFERENCE
from tests.robust.runs import (
    callback_arg,
    last_checkpoint,
    run_cli,
    start_cli,
    tiny_fit,
    version_dir,
    wait_for,
    weights,
)


@pytest.mark.slow
def test_sigkilled_run_resumes_to_the_weights_of_an_uninterrupted_run(
    reference_run: Path, tmp_path: Path
) -> None:
    save_dir, marker, log = tmp_path / "runs", tmp_path / "paused", tmp_path / "killed.log"
    # Pause (then die) in epoch 1 after global step 6: last.ckpt holds step 6, 2 of the epoch's 4 batches.
    pause = callback_arg("PauseAtStep", step=6, marker=str(marker))
    process = start_cli(tiny_fit(save_dir, *REFERENCE, pause), log)
    wait_for(marker, process, log)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL

    killed = last_checkpoint(save_dir, version=0)
    assert killed["global_step"] == 6 and killed["epoch"] == 1
    loader = killed["loops"]["fit_loop"]["state_dict"]["combined_loader"][0]
    assert (loader["epoch"], loader["batches"]) == (1, 2), "the checkpoint is not mid-epoch"
    assert not list((save_dir / "imdb" / "version_0" / "checkpoints").glob(".*partial")), (
        "a torn write was left"
    )

    # The resumed run logs into version_1; `--ckpt_path last` finds version_0's last.ckpt.
    out = run_cli(tiny_fit(save_dir, *REFERENCE, "--ckpt_path", "last"))
    assert "Restored all states" in out and "version_0/checkpoints/last.ckpt" in out

    resumed, uninterrupted = last_checkpoint(save_dir, version=1), weights(reference_run)
    assert resumed["global_step"] == 12
    assert resumed["state_dict"].keys() == uninterrupted.keys()
    for name, tensor in uninterrupted.items():
        assert torch.equal(resumed["state_dict"][name], tensor), f"{name} differs after resume"

    # The resumed run's card counts the killed segment's training up to its checkpoint, not only its own.
    card = json.loads((version_dir(save_dir, 1) / "run_card.json").read_text())
    earlier = killed["callbacks"]["FitClock"]
    assert earlier["segments"] == 1 and earlier["fit_seconds"] > 0
    assert card["segments"]["count"] == 2
    assert card["segments"]["resumed_from"] == "../version_0/checkpoints/last.ckpt"
    this_process = card["segments"]["this_process_fit_seconds"]
    assert card["fit_seconds"] == pytest.approx(this_process + earlier["fit_seconds"], abs=0.15)
    # Counter-check: the uninterrupted run's card is one segment, its seconds its own process's.
    whole = json.loads((version_dir(reference_run, 0) / "run_card.json").read_text())
    assert whole["segments"] == {
        "count": 1,
        "this_process_fit_seconds": whole["fit_seconds"],
        "resumed_from": None,
    }


def test_one_process_batch_is_the_union_of_the_ranks_batches() -> None:
    data = list(range(64))
    single = ResumableLoader(data, batch_size=16, sampler=EpochSampler(data, seed=3))
    ranks = [
        ResumableLoader(data, batch_size=8, sampler=EpochSampler(data, seed=3, num_replicas=2, rank=r))
        for r in (0, 1)
    ]
    for epoch in (0, 1):
        for loader in (single, *ranks):
            loader.epoch_sampler.set_epoch(epoch)
        for whole, *parts in zip(single, *ranks, strict=True):
            assert sorted(whole.tolist()) == sorted(torch.cat(parts).tolist())
    other_seed = ResumableLoader(data, 16, seed=100)
    assert next(iter(single)).tolist() != next(iter(other_seed)).tolist()


def test_loader_state_resumes_at_the_next_unseen_batch() -> None:
    data = list(range(50))
    loader = ResumableLoader(data, batch_size=8, seed=0)
    loader.epoch_sampler.set_epoch(2)
    iterator = iter(loader)
    seen = [next(iterator), next(iterator), next(iterator)]
    state = loader.state_dict()
    rest = list(iterator)
    resumed = ResumableLoader(data, batch_size=8, seed=0)
    resumed.load_state_dict(state)
    assert [b.tolist() for b in resumed] == [b.tolist() for b in rest]
    assert sorted(torch.cat([*seen, *rest]).tolist()) == data
    resumed.epoch_sampler.set_epoch(3)  # the next epoch starts from its beginning again
    assert len(list(resumed)) == 7
