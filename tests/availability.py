"""Tests that need a dataset or a weight wheel the machine may lack: one way to skip them, one switch to
refuse the skip.

Every such test skips through `needs` (a decorator), `skip_unless_available` or `require_module` (inside a
test or fixture), which put MISSING in the reason. With TABRASA_REQUIRE_ALL=1 (as CI runs) the
`pytest_runtest_makereport` hook below, imported by tests/conftest.py, turns each of those skips into a
failure, so a missing package cannot leave the suite green while testing nothing. Other skips (this machine
has a GPU) stay skips.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Generator
from types import ModuleType

import pytest

REQUIRE_ALL = "TABRASA_REQUIRE_ALL"
MISSING = "missing data or weights"


def required() -> bool:
    return os.environ.get(REQUIRE_ALL) == "1"


def installed(package: str) -> bool:
    """Whether `package` can be imported, without importing it (some wheels' own code needs more)."""
    return importlib.util.find_spec(package) is not None


def needs(available: bool, what: str) -> pytest.MarkDecorator:
    """Skip the decorated test when `what` (a dataset, a wheel: say how to install it) is not available."""
    return pytest.mark.skipif(not available, reason=f"{MISSING}: {what}")


def skip_unless_available(available: bool, what: str) -> None:
    """The same inside a test or fixture, where availability is found out at run time."""
    if not available:
        pytest.skip(f"{MISSING}: {what}", allow_module_level=True)


def require_module(name: str, what: str) -> ModuleType:
    """`pytest.importorskip` for a wheel that holds data or weights, or the reference that checks them."""
    skip_unless_available(installed(name), what)
    return importlib.import_module(name)


def _skip_reason(report: pytest.TestReport) -> str | None:
    if not report.skipped or hasattr(report, "wasxfail") or not isinstance(report.longrepr, tuple):
        return None
    return str(report.longrepr[2]).removeprefix("Skipped: ")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under TABRASA_REQUIRE_ALL=1, a skip for missing data or weights is reported as a failure."""
    report = yield
    reason = _skip_reason(report)
    if reason is not None and MISSING in reason and required():
        report.outcome = "failed"
        report.longrepr = (
            f"{REQUIRE_ALL}=1 requires every dataset and weight wheel, and this test's is absent: {reason}"
        )
    return report
