"""The suite's shared fixtures for the harness's tests (the project cache one reads datasets from)."""

from tests.conftest import cache_dir

__all__ = ["cache_dir"]
