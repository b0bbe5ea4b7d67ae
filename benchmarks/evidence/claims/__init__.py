"""One module per numeric claim; each has a `Settings` dataclass and `run(settings, seeds, device)`.

Shared by them: `arm_sweep` (every trained arm's own learning-rate sweep, chosen on validation) and
`paired_timing` (the speed ratio of interleaved timings with its interval)."""

from collections.abc import Callable, Sequence
from typing import Any

import torch

from benchmarks.evidence.claims import (
    heads,
    int8,
    layernorm,
    long_range,
    long_range_mixers,
    path_length,
    rnn_speed,
    shared_qkv,
)
from benchmarks.evidence.report import ClaimResult

Run = Callable[[Any, Sequence[int], torch.device], ClaimResult]

# In the order of the table: the order.
CLAIMS: dict[str, Run] = {
    "long_range": long_range.run,
    "long_range_mixers": long_range_mixers.run,
    "rnn_speed": rnn_speed.run,
    "heads": heads.run,
    "layernorm": layernorm.run,
    "shared_qkv": shared_qkv.run,
    "int8": int8.run,
    "path_length": path_length.run,
}

__all__ = ["CLAIMS", "Run"]
