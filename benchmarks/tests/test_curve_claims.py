"""Two sweep processes sharing one arm: a claimed run is never trained twice, a dead owner's claim is taken
over, a blocked arm lends its turn to the next, and a process with nothing free waits for the other's
result instead of duplicating it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.curves.claims import Claims, made_once
from benchmarks.curves.early_stopped_run import KEY_FIELDS, RunKey
from benchmarks.curves.sweep import needed_keys, run_sweep
from benchmarks.evidence.lanes import Lane
from benchmarks.evidence.rate_sweep import RunLog
from benchmarks.tests.test_curves import fake_plan, fake_runner


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_claim_is_exclusive_while_its_owner_lives_and_taken_over_when_it_dies(tmp_path: Path) -> None:
    claims = Claims(tmp_path / "runs.jsonl", folder=tmp_path / "claims")
    assert claims.take("a") and claims.owner("a") == os.getpid()
    claims._path("b").write_text(str(os.getppid()))  # a live other process holds b
    assert not claims.take("b")
    claims._path("c").write_text(str(dead_pid()))  # a killed sweep left c behind
    assert claims.owner("c") is None and claims.take("c")
    claims.release("a")
    assert claims.owner("a") is None


def test_a_shared_input_another_process_is_making_is_waited_for_not_made_beside_it(tmp_path: Path) -> None:
    claims = Claims(tmp_path / "runs.jsonl", folder=tmp_path / "claims")
    name = "pretraining image 0.03"
    claims._path(name).write_text(str(os.getppid()))  # another process is pretraining on that fraction
    folder: dict[str, str] = {}
    waits: list[float] = []

    def wait(seconds: float) -> None:  # the other process finishes its export while this one waits
        waits.append(seconds)
        folder["export"] = "made by the other process"
        claims.release(name)

    def make() -> str:  # as Pretrainings.get: a finished export is read, never made again
        return folder.setdefault("export", "made here")

    assert made_once(claims, name, make, wait=wait) == "made by the other process"
    assert waits == [30.0] and claims.owner(name) is None
    # counter: with nobody holding it, the export is made at once and the claim is given back
    assert made_once(claims, "pretraining image 1", lambda: "made here", wait=wait) == "made here"
    assert waits == [30.0] and claims.owner("pretraining image 1") is None


def test_a_run_held_elsewhere_is_waited_for_and_never_run_twice(tmp_path: Path) -> None:
    plan = fake_plan()
    log_path = tmp_path / "runs.jsonl"
    claims = Claims(log_path, folder=tmp_path / "claims")
    first, _ = needed_keys(plan, plan.arm("transformer"), RunLog(log_path, KEY_FIELDS))
    held = first[0]  # the first rate-sweep run: the other process is training it
    name = RunLog(log_path, KEY_FIELDS).name(held)
    claims._path(name).write_text(str(os.getppid()))
    other = fake_runner([])
    waits: list[float] = []

    ran_before_wait: list[str] = []

    def wait(seconds: float) -> None:  # the other process finishes while this one waits
        waits.append(seconds)
        ran_before_wait.extend(k.arm for k in calls)
        with log_path.open("a") as handle:
            handle.write(json.dumps(other(plan, plan.arm("transformer"), held)) + "\n")
        claims.release(name)

    calls: list[RunKey] = []
    run_sweep([plan], log_path, fake_runner(calls), Lane(), claims=claims, wait=wait)
    assert held not in calls  # it took the other free rate first, then waited, then used the result
    assert len(waits) == 1
    assert "cnn" in ran_before_wait  # the blocked arm lent its turn: the next arm ran meanwhile
    assert len({RunLog(log_path, KEY_FIELDS).name(k) for k in calls}) == len(calls)


def test_counter_without_the_claim_the_held_run_would_be_trained_here(tmp_path: Path) -> None:
    plan = fake_plan()
    calls: list[RunKey] = []
    first, _ = needed_keys(plan, plan.arm("transformer"), RunLog(tmp_path / "runs.jsonl", KEY_FIELDS))
    run_sweep([plan], tmp_path / "runs.jsonl", fake_runner(calls), Lane(),
              claims=Claims(tmp_path / "runs.jsonl", folder=tmp_path / "claims"))  # fmt: skip
    assert first[0] in calls


def test_a_stopped_sweep_leaves_whole_curves_of_the_first_seeds(tmp_path: Path) -> None:
    plan = fake_plan()
    calls: list[RunKey] = []
    run_sweep([plan], tmp_path / "runs.jsonl", fake_runner(calls), Lane())
    curve = [k for k in calls if k.arm == "cnn" and (k.seed, k.fraction) not in {(0, 0.01), (0, 1.0)}]
    seeds = [k.seed for k in curve]
    assert seeds == sorted(seeds)  # seed by seed, not fraction by fraction
