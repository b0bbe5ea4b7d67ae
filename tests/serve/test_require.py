"""`require`: a missing tool skips its test, except under TABRASA_REQUIRE_ALL=1 (CI), where it fails."""

from __future__ import annotations

import pytest

from tests.serve.conftest import REQUIRE_ALL, require


def test_a_missing_tool_skips_unless_every_tool_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    require(True, "never shown")
    monkeypatch.delenv(REQUIRE_ALL, raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is missing"):
        require(False, "chromium is missing")
    monkeypatch.setenv(REQUIRE_ALL, "1")
    with pytest.raises(pytest.fail.Exception, match="chromium is missing"):
        require(False, "chromium is missing")
