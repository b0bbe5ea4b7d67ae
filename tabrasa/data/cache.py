"""Where prepared datasets, vocabularies and features are cached: $TABRASA_CACHE or ~/.cache/tabrasa."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def cache_root(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override)
    return Path(os.environ.get("TABRASA_CACHE", Path.home() / ".cache" / "tabrasa"))


def settings_key(settings: dict[str, Any]) -> str:
    """A short stable hash of the settings a cached artefact depends on; new settings, new cache entry."""
    blob = json.dumps(settings, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]
