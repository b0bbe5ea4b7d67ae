"""The joint training schedule: task proportions per sampling mode, identical on every rank, resumable."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from torch.utils.data import TensorDataset

from tabrasa.errors import UserError
from tabrasa.training.resumable_data import EpochSampler, ResumableLoader
from tabrasa.training.task_schedule import TaskScheduleLoader, task_probabilities

SIZES = {"big": 900, "mid": 90, "small": 10}


def loaders(batch: int = 4, rank: int = 0, replicas: int = 1) -> dict[str, ResumableLoader]:
    out = {}
    for offset, (name, n) in enumerate(SIZES.items()):
        data = TensorDataset(torch.arange(n) + 10_000 * offset)
        sampler = EpochSampler(data, seed=0, num_replicas=replicas, rank=rank)
        out[name] = ResumableLoader(data, batch_size=batch, sampler=sampler)
    return out


def test_probabilities_per_mode() -> None:
    assert task_probabilities(SIZES, "proportional", 1.0) == pytest.approx(
        {"big": 0.9, "mid": 0.09, "small": 0.01}
    )
    uniform = {"big": 1 / 3, "mid": 1 / 3, "small": 1 / 3}
    assert task_probabilities(SIZES, "round_robin", 1.0) == pytest.approx(uniform)
    # T = 2: p ∝ sqrt(n) = 30, 9.49, 3.16
    t2 = task_probabilities(SIZES, "temperature", 2.0)
    assert t2 == pytest.approx({"big": 30 / 42.65, "mid": 9.487 / 42.65, "small": 3.162 / 42.65}, abs=1e-3)
    # T = 1 is proportional; a very large T is uniform
    assert task_probabilities(SIZES, "temperature", 1.0) == pytest.approx(
        task_probabilities(SIZES, "proportional", 1)
    )
    assert task_probabilities(SIZES, "temperature", 1e6) == pytest.approx(uniform, abs=1e-4)
    with pytest.raises(UserError, match="temperature=0"):
        task_probabilities(SIZES, "temperature", 0.0)


@pytest.mark.parametrize(("sampling", "temperature"), [("proportional", 1.0), ("temperature", 2.0)])
def test_drawn_schedule_matches_the_probabilities(sampling: str, temperature: float) -> None:
    schedule = TaskScheduleLoader(loaders(), SIZES, sampling, temperature, steps_per_epoch=40_000)  # type: ignore[arg-type]
    counts = Counter(schedule.schedule(0))
    expected = task_probabilities(SIZES, sampling, temperature)  # type: ignore[arg-type]
    for name, p in expected.items():
        assert counts[name] / 40_000 == pytest.approx(p, abs=0.01)


def test_round_robin_cycles_exactly_and_continues_across_epochs() -> None:
    schedule = TaskScheduleLoader(loaders(), SIZES, "round_robin", steps_per_epoch=5)
    assert schedule.schedule(0) == ["big", "mid", "small", "big", "mid"]
    assert schedule.schedule(1) == ["small", "big", "mid", "small", "big"]


def test_every_rank_draws_the_same_tasks_from_its_own_shard() -> None:
    ranks = [TaskScheduleLoader(loaders(rank=r, replicas=2), SIZES, steps_per_epoch=60) for r in (0, 1)]
    steps = [list(rank) for rank in ranks]
    assert [name for name, _ in steps[0]] == [name for name, _ in steps[1]]
    for (name, (a,)), (_, (b,)) in zip(steps[0], steps[1], strict=True):
        assert not set(a.tolist()) & set(b.tolist()), f"{name}: ranks share examples"


def test_a_task_that_runs_out_starts_its_next_pass() -> None:
    schedule = TaskScheduleLoader(loaders(), SIZES, "round_robin", steps_per_epoch=30)
    small = [batch[0] for name, batch in schedule if name == "small"]  # 10 steps of a 3-batch task
    first_pass = torch.cat(small[:3])
    assert sorted(first_pass.tolist()) == list(range(20_000, 20_010))  # every example once
    assert not torch.equal(torch.cat(small[3:6]), first_pass)  # the next pass is reshuffled


def test_resume_mid_epoch_continues_exactly() -> None:
    uninterrupted = TaskScheduleLoader(loaders(), SIZES, steps_per_epoch=50)
    expected = [
        (n, b[0].tolist()) for _, (n, b) in zip(range(50 + 50), _epochs(uninterrupted, 2), strict=False)
    ]

    first = TaskScheduleLoader(loaders(), SIZES, steps_per_epoch=50)
    seen = []
    for step, (name, batch) in enumerate(first):
        seen.append((name, batch[0].tolist()))
        if step == 36:
            break
    state = first.state_dict()
    resumed = TaskScheduleLoader(loaders(), SIZES, steps_per_epoch=50)
    resumed.load_state_dict(state)
    seen += [(n, b[0].tolist()) for n, b in _epochs(resumed, 2)][: 100 - len(seen)]
    assert seen == expected


def test_resuming_with_other_tasks_is_refused() -> None:
    state = TaskScheduleLoader(loaders(), SIZES).state_dict()
    other = TaskScheduleLoader({"big": loaders()["big"]}, {"big": 900})
    with pytest.raises(UserError, match="same tasks"):
        other.load_state_dict(state)


def _epochs(loader: TaskScheduleLoader, count: int) -> list[tuple[str, list[torch.Tensor]]]:
    out = []
    for _ in range(count):
        out += list(loader)
    return out
