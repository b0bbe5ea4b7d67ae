"""The learning-rate schedule: linear warmup by fraction or by steps, then cosine; bad settings refused."""

from __future__ import annotations

import pytest
import torch

from tabrasa.errors import UserError
from tabrasa.tasks import OptimConfig
from tabrasa.tasks.schedule import warmup_cosine


def rates(config: OptimConfig, total: int) -> list[float]:
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=config.lr)
    sched = warmup_cosine(opt, total, config)
    out = []
    for _ in range(total):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


def test_warmup_fraction_then_cosine() -> None:
    lrs = rates(OptimConfig(lr=1.0, warmup_fraction=0.1), 100)
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert lrs[55] == pytest.approx(0.5, abs=0.02) and lrs[-1] < 0.01


def test_warmup_steps_is_a_count_whatever_the_run_length() -> None:
    # 1 step of warmup used to be expressible only as warmup=1 (>= 1 meant steps, < 1 a fraction).
    for total in (10, 1000):
        lrs = rates(OptimConfig(lr=1.0, warmup_steps=4), total)
        assert lrs[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert OptimConfig(warmup_steps=50).warmup_for(20) == 19  # never the whole run


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"warmup_fraction": 1.5}, "warmup_fraction=1.5"),
        ({"warmup_fraction": 0.2, "warmup_steps": 10}, "keep one of them"),
        ({"warmup_steps": -1}, "warmup_steps=-1"),
        ({"lr": 0.0}, "lr=0.0"),
        ({"weight_decay": -0.1}, "weight_decay=-0.1"),
    ],
)
def test_bad_settings_name_the_field(settings: dict[str, float], named: str) -> None:
    with pytest.raises(UserError, match=named.replace("(", r"\(")):
        OptimConfig(**settings)  # type: ignore[arg-type]
