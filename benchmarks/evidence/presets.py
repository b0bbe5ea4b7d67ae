"""Settings of every claim at three scales: smoke (the test, seconds), quick (2 CPU cores, minutes, the
README's table) and full (larger models and budgets, for a GPU). Quick is each Settings' defaults.

Every trained arm sweeps its own learning rates (`claims.arm_sweep`), so no budget here names a rate."""

from __future__ import annotations

from typing import Any

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
from benchmarks.evidence.models import Shape
from benchmarks.evidence.synthetic_tasks import FirstTokensTask, RandomPairsTask, RecallTask
from benchmarks.evidence.synthetic_training import TrainConfig

SEEDS = {"smoke": (0, 1), "quick": (0, 1, 2), "full": (0, 1, 2)}

_TINY = Shape(dim=32, depth=2, heads=2)
_TINY_SINUSOIDAL = Shape(dim=32, depth=2, heads=2, positions="sinusoidal")
_TWO_RATES = (1e-3, 1e-2)  # smoke checks the sweep runs, not which rate wins
_TINY_RECALL = RecallTask(pairs=3, keys=8, values=4)
_TINY_RECALL_2 = RecallTask(pairs=3, keys=8, values=4, queries=2)


def _smoke() -> dict[str, Any]:
    fit = TrainConfig(steps=4, batch=8, eval_every=2, eval_batches=1, test_examples=64)
    rates = _TWO_RATES
    long = long_range.Settings(
        task=FirstTokensTask(length=64, signal=4),
        curriculum=((8, 2), (16, 2)),
        shape=_TINY_SINUSOIDAL,
        train=fit,
        rates=rates,
    )
    return {
        "long_range": long,
        "long_range_mixers": long_range_mixers.Settings.sharing(long),
        "rnn_speed": rnn_speed.Settings(lengths=(16, 32), shape=_TINY_SINUSOIDAL, batch=4, repeats=6),
        "heads": heads.Settings(
            tasks=(_TINY_RECALL_2,), shape=Shape(dim=32, depth=2, heads=8), train=fit, rates=rates
        ),
        "layernorm": layernorm.Settings(
            task=_TINY_RECALL, shape=_TINY, threshold=0.3, train=fit, rates=rates
        ),
        "shared_qkv": shared_qkv.Settings(task=RandomPairsTask(size=32), shape=_TINY, train=fit, rates=rates),
        "int8": int8.Settings(
            task=_TINY_RECALL,
            trained=_TINY,
            train=fit,
            rates=rates,
            wide=_TINY,
            wide_length=16,
            batch=4,
            repeats=6,
        ),
        "path_length": path_length.Settings(lengths=(8, 16, 32), shape=_TINY_SINUSOIDAL, samples=2),
    }


def _quick() -> dict[str, Any]:
    return {
        "long_range": long_range.Settings(),
        "long_range_mixers": long_range_mixers.Settings.sharing(long_range.Settings()),
        "rnn_speed": rnn_speed.Settings(),
        "heads": heads.Settings(),
        "layernorm": layernorm.Settings(),
        "shared_qkv": shared_qkv.Settings(),
        "int8": int8.Settings(),
        "path_length": path_length.Settings(),
    }


def _full() -> dict[str, Any]:
    shape = Shape(dim=128, depth=4, heads=8)
    sinusoidal = Shape(dim=128, depth=4, heads=8, positions="sinusoidal")
    recall = RecallTask(pairs=32, keys=128, values=32)
    two_queries = tuple(
        RecallTask(pairs=pairs, keys=4 * pairs, values=16, queries=2) for pairs in (16, 32, 64)
    )
    long = long_range.Settings(
        task=FirstTokensTask(length=1024, signal=32),
        shape=Shape(dim=128, depth=2, heads=4, positions="sinusoidal"),
        curriculum=((64, 2000), (256, 2000)),
        train=TrainConfig(steps=4000, batch=32),
    )
    return {
        "long_range": long,
        "long_range_mixers": long_range_mixers.Settings.sharing(long),
        "rnn_speed": rnn_speed.Settings(lengths=(256, 1024, 4096), shape=sinusoidal, batch=32, repeats=20),
        "heads": heads.Settings(tasks=two_queries, shape=shape, train=TrainConfig(steps=4000, batch=128)),
        "layernorm": layernorm.Settings(
            task=recall, shape=shape, train=TrainConfig(steps=6000, batch=128, eval_every=50)
        ),
        "shared_qkv": shared_qkv.Settings(
            task=RandomPairsTask(size=16384),
            shape=Shape(dim=64, depth=2, heads=4),
            train=TrainConfig(steps=4000, batch=256),
        ),
        "int8": int8.Settings(
            task=recall,
            trained=Shape(dim=128, depth=2, heads=4),
            wide=Shape(dim=512, depth=6, heads=8),
            repeats=20,
        ),
        "path_length": path_length.Settings(lengths=(64, 256, 1024, 4096), shape=sinusoidal, samples=8),
    }


PRESETS = {"smoke": _smoke, "quick": _quick, "full": _full}
