"""Kept freed memory: a large block freed and allocated again is reused instead of faulted in anew."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

# Ten rounds of allocating, touching and freeing 64 MiB (16,384 pages of 4 KiB): glibc's default unmaps
# the block each time, so each round faults every page in again; kept, the warm-up's pages serve them.
MEASURED_ROUNDS = 10
ROUNDS = f"""
import resource, sys
import torch
from tabrasa.training.freed_memory import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else False
for _ in range(3):  # warm-up rounds: the kept heap grows to hold the block beside what else lives
    torch.ones(16 * 2**20).sum()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range({MEASURED_ROUNDS}):
    torch.ones(16 * 2**20).sum()
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
PAGES_A_ROUND = 16 * 2**20 * 4 // 4096
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux")


def page_faults(setting: str) -> tuple[bool, int]:
    out = subprocess.run(
        [sys.executable, "-c", ROUNDS, setting], capture_output=True, text=True, check=True
    ).stdout.split()
    return out[0] == "True", int(out[1])


@linux_only
def test_kept_freed_memory_is_reused_without_page_faults() -> None:
    kept, faults = page_faults("keep")
    assert kept
    # Most rounds fault nothing in: usually 0 pages, but now and then whole rounds' pages are faulted in
    # again (one round in 1 of 6 runs here; two rounds of five failed a tighter bound in CI), for a reason
    # not pinned down. Without the setting every round faults its pages in (the counter-test below).
    assert faults < MEASURED_ROUNDS // 2 * PAGES_A_ROUND, faults


@linux_only
def test_counter_with_glibc_defaults_every_round_faults_its_pages_in_again() -> None:
    kept, faults = page_faults("default")
    assert not kept
    assert faults >= (MEASURED_ROUNDS - 2) * PAGES_A_ROUND, faults


def test_the_lightning_subcommands_keep_freed_memory_and_the_others_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = importlib.import_module("tabrasa.cli.main")  # the module: the package attribute is main()
    calls: list[str] = []
    monkeypatch.setattr(cli, "keep_freed_memory", lambda: calls.append("kept") or True)
    monkeypatch.setattr(cli, "build_cli", lambda args: calls.append(args[0]))
    monkeypatch.setitem(cli.SUBCOMMANDS, "serve", (__name__, "pretend_to_serve"))
    cli.dispatch(["fit", "--config", "x.yaml"])
    assert calls == ["kept", "fit"]
    calls.clear()
    assert cli.dispatch(["serve", "--checkpoint", "x.ckpt"]) == 0  # counter: a server keeps glibc's
    assert calls == []


def pretend_to_serve(args: list[str]) -> int:
    return 0
