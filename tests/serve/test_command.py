"""`tabrasa serve`'s options: safe defaults (localhost only, no key unless given), mistakes as one-line
UserErrors before anything starts."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from tabrasa.errors import UserError
from tabrasa.serve import command
from tests.serve.launch import ROOT


def parse(*args: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(["--run", "runs/x", *args])


def test_defaults_bind_localhost_batch_and_leave_the_key_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(command.API_KEY_ENV, raising=False)
    options = parse()
    assert (options.host, options.max_batch_size, options.batch_timeout) == ("127.0.0.1", 8, 0.01)
    assert not options.onnx
    assert command.key_of(options) is None
    command.check(options)


def test_the_key_comes_from_the_option_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(command.API_KEY_ENV, "from-env")
    assert command.key_of(parse()) == "from-env"
    assert command.key_of(parse("--api-key", "given")) == "given"
    assert parse("--max_batch_size", "3").max_batch_size == 3  # the other subcommands' spelling works too


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--max-batch-size", "0"), "--max-batch-size 0 must be >= 1"),
        (("--batch-timeout", "-1"), "must be >= 0"),
        (("--max-bytes", "0"), "--max-bytes 0"),
        (("--timeout", "0.001", "--batch-timeout", "0.01"), "must be longer than --batch-timeout"),
        (("--workers", "0"), "--workers 0"),
        (("--port", "80"), "from 1024 to 65535"),
        (("--onnx-dir", "x"), "add --onnx"),
    ],
)
def test_bad_options_are_user_errors(args: tuple[str, ...], words: str) -> None:
    with pytest.raises(UserError, match=words):
        command.check(parse(*args))


def test_an_unknown_host_is_refused_by_the_parser() -> None:
    with pytest.raises(SystemExit):
        parse("--host", "example.com")


def test_a_missing_run_is_one_line_before_any_server_starts(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        command.run(parse("--run", str(tmp_path / "nothing")))


@pytest.mark.slow
def test_the_module_entry_point_prints_a_user_error_as_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tabrasa.serve", "--run", str(tmp_path / "nothing")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    assert "tabrasa serve: error:" in done.stderr and "Traceback" not in done.stderr
