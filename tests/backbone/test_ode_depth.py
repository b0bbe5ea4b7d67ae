"""Continuous depth (tabrasa/backbone/ode_depth.py): Euler with unit steps is the residual stack, adjoint
gradients are backprop's, every evaluation of f is counted, padding stays out, configs."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

import tabrasa.backbone.ode_depth as ode_depth
from tabrasa.backbone import AttentionMask, Backbone, Encoder, EncoderConfig, ODEConfig, ODEEncoder
from tabrasa.backbone.ode_depth import NFECounter, VectorField, nfe_metrics
from tests.backbone.test_gau import DIM, build, padding_is_invisible

BLOCK_OPTIONS: dict[str, dict[str, Any]] = {
    "plain": {},
    "rotary": {"positions": "rotary"},
    "layer_scale_qk_norm": {"layer_scale_init": 0.5, "qk_norm": True},
}


def ode(seed: int = 0, **options: Any) -> ODEEncoder:
    torch.manual_seed(seed)
    return ODEEncoder(ODEConfig(**({"dim": DIM, "heads": 4, "max_len": 16} | options))).eval()


def lively(model: ODEEncoder, scale: float = 10.0) -> ODEEncoder:
    """Output projections `scale` times their N(0, 0.02) start, so f is large enough that the solvers and
    step counts differ measurably."""
    with torch.no_grad():
        model.block.attn.proj.weight.mul_(scale)
        model.block.mlp.fc2.weight.mul_(scale)
    return model


def residual_stack(model: ODEEncoder, depth: int) -> Encoder:
    """An Encoder of `depth` blocks, each with the ODE's block weights (and its positions and final norm)."""
    c = model.config
    encoder = Encoder(
        EncoderConfig(
            dim=c.dim,
            depth=depth,
            heads=c.heads,
            max_len=c.max_len,
            positions=c.positions,
            layer_scale_init=c.layer_scale_init,
            qk_norm=c.qk_norm,
        )
    )
    state = {k: v for k, v in model.state_dict().items() if not k.startswith("block.")}
    for i in range(depth):
        state |= {f"blocks.{i}.{k[6:]}": v for k, v in model.state_dict().items() if k.startswith("block.")}
    encoder.to(next(model.parameters()).dtype).load_state_dict(state)  # cast first: loading casts to it
    return encoder.eval()


def padded_batch(dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(2, 8, DIM, dtype=dtype)
    mask = torch.ones(2, 8, dtype=torch.bool)
    mask[1, 5:] = False
    return x, mask


@pytest.mark.parametrize("option", list(BLOCK_OPTIONS))
def test_one_euler_step_of_size_one_is_one_residual_block(option: str) -> None:
    model = lively(ode(method="euler", steps=1, t1=1.0, **BLOCK_OPTIONS[option]).double())
    x, mask = padded_batch(torch.float64)
    block = residual_stack(model, depth=1)
    torch.testing.assert_close(model(x, mask), block(x, mask), atol=1e-12, rtol=0)
    assert model.last_nfe == 1


def test_euler_with_unit_steps_is_a_weight_tied_stack_and_other_steps_are_not() -> None:
    x, mask = padded_batch(torch.float64)
    model = lively(ode(method="euler", steps=3, t1=3.0).double())
    torch.testing.assert_close(model(x, mask), residual_stack(model, 3)(x, mask), atol=1e-12, rtol=0)
    half_steps = lively(ode(method="euler", steps=2, t1=1.0).double())  # counter-test: two steps of 1/2
    assert (half_steps(x, mask) - residual_stack(half_steps, 1)(x, mask)).abs().max() > 1e-3


class Evaluations:
    """Counts calls of the block's attention, independently of the encoder's own counter."""

    def __init__(self, model: ODEEncoder) -> None:
        self.calls = 0
        model.block.attn.register_forward_hook(self.hook)

    def hook(self, *_: object) -> None:
        self.calls += 1


@pytest.mark.parametrize(("method", "per_step"), [("euler", 1), ("midpoint", 2), ("rk4", 4)])
def test_fixed_step_nfe_is_evaluations_per_step_times_steps(method: str, per_step: int) -> None:
    model = ode(method=method, steps=3)
    seen = Evaluations(model)
    x, mask = padded_batch()
    model(x, mask).sum().backward()
    assert model.last_nfe == seen.calls == 3 * per_step
    assert model.last_backward_nfe == 0  # backprop differentiates the recorded steps, f is not called
    model(x, mask)
    assert model.total_nfe == 6 * per_step and model.last_nfe == 3 * per_step


@pytest.mark.parametrize("adjoint", [False, True])
def test_adaptive_nfe_counts_every_evaluation_forward_and_backward(adjoint: bool) -> None:
    model = ode(method="dopri5", rtol=1e-6, atol=1e-6, adjoint=adjoint).train()
    seen = Evaluations(model)
    x, mask = padded_batch()
    out = model(x, mask)
    forward = seen.calls
    # dopri5: f(t0), one more for the initial step size, then 6 per attempted step (first same as last)
    assert model.last_nfe == forward and forward > 2 and (forward - 2) % 6 == 0
    (out * torch.randn_like(out)).sum().backward()
    assert model.last_backward_nfe == seen.calls - forward
    assert (model.last_backward_nfe > 0) == adjoint
    wrapper = nn.ModuleDict({"backbone": model})
    assert nfe_metrics(wrapper) == {
        "backbone/nfe": float(forward),
        "backbone/nfe_backward": float(seen.calls - forward),
        "backbone/nfe_total": float(seen.calls),
    }
    assert nfe_metrics(nn.Linear(2, 2)) == {}


def gradients(model: ODEEncoder, x: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
    x = x.clone().requires_grad_(True)
    readout = torch.randn(x.shape, dtype=x.dtype, generator=torch.Generator().manual_seed(1))
    loss = (model(x, mask) * readout).sum()
    return list(torch.autograd.grad(loss, [x, *model.parameters()]))


def assert_gradients_match(solver: dict[str, Any], tolerance: float) -> None:
    """Adjoint and backprop gradients of x and every parameter, each within `tolerance` of its largest
    entry (float64: the solver's error, not rounding, is what is compared)."""
    x, mask = padded_batch(torch.float64)
    direct = gradients(lively(ode(**solver).double()), x, mask)
    adjoint = gradients(lively(ode(adjoint=True, **solver).double()), x, mask)
    for a, d in zip(adjoint, direct, strict=True):
        torch.testing.assert_close(a, d, atol=tolerance * float(d.abs().max()), rtol=0)


def test_adjoint_gradients_match_direct_backprop_with_rk4() -> None:
    """rk4 steps of 1/8: the adjoint ODE solved backwards on the same grid is backprop's gradient to
    O(h⁴); with time conditioning, so its parameters are compared too."""
    assert_gradients_match({"method": "rk4", "steps": 8, "time": "add"}, 1e-6)


def test_adjoint_gradients_match_direct_backprop_with_dopri5() -> None:
    assert_gradients_match({"method": "dopri5", "rtol": 1e-8, "atol": 1e-8}, 1e-5)


def test_counter_adjoint_gradients_of_a_coarse_solve_are_not_backprops() -> None:
    """One Euler step: backprop differentiates the step taken, the adjoint solves its own ODE backwards
    with one step too, which is a different approximation of the gradient."""
    x, mask = padded_batch(torch.float64)
    direct = gradients(lively(ode(method="euler", steps=1).double()), x, mask)
    adjoint = gradients(lively(ode(method="euler", steps=1, adjoint=True).double()), x, mask)
    assert (
        max(float((a - d).abs().max() / d.abs().max()) for a, d in zip(adjoint, direct, strict=True)) > 1e-3
    )


@pytest.mark.parametrize(
    "options",
    [{"method": "euler", "steps": 2}, {"method": "rk4", "steps": 2, "positions": "rotary", "time": "concat"}],
    ids=["euler", "rk4_rotary_time"],
)
def test_fixed_step_padding_never_changes_real_tokens(options: dict[str, Any]) -> None:
    padding_is_invisible(ode(**options))


def adaptive_padding_gap(model: ODEEncoder) -> float:
    """One row alone and with 40 noisy padding tokens: the largest change at its real tokens."""
    lively(model, 30.0)  # a large f, so the solver takes steps that the norm can change
    x = torch.randn(1, 9, DIM)
    padded = torch.cat((x, 100 * torch.randn(1, 40, DIM)), dim=1)
    mask = torch.arange(49)[None] < 9
    with torch.no_grad():
        return float((model(padded, mask)[0, :9] - model(x)[0]).abs().max())


def test_adaptive_padding_never_changes_real_tokens_and_torchdiffeqs_norm_would(monkeypatch) -> None:
    options = {"method": "dopri5", "rtol": 1e-4, "atol": 1e-5, "max_len": 64}
    assert adaptive_padding_gap(ode(**options)) < 1e-5
    # counter-test: torchdiffeq's RMS over every element, padding included, moves the step sizes
    monkeypatch.setattr(ode_depth, "_real_token_rms", lambda keep: lambda x: x.pow(2).mean().sqrt())
    assert adaptive_padding_gap(ode(**options)) > 2e-5


@pytest.mark.parametrize("method", ["rk4", "dopri5"])
def test_a_fully_padded_row_gives_zeros_not_nan_and_leaves_the_other_row(method: str) -> None:
    model = ode(method=method)
    x = torch.randn(2, 6, DIM)
    out = model(x, torch.tensor([[True] * 6, [False] * 6]))
    assert torch.isfinite(out).all() and torch.all(out[1] == 0)
    torch.testing.assert_close(out[0], model(x[:1])[0], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("adjoint", [False, True])
def test_gradients_reach_every_parameter(adjoint: bool) -> None:
    model = ode(method="rk4", steps=2, time="add", adjoint=adjoint).train()
    x, mask = padded_batch()
    for name, g in zip(["x", *dict(model.named_parameters())], gradients(model, x, mask), strict=True):
        assert torch.isfinite(g).all() and g.abs().sum() > 0, name


@pytest.mark.parametrize("time", ["none", "add", "concat"])
def test_time_conditioning_makes_f_depend_on_t_only_when_asked(time: str) -> None:
    model = ode(time=time)
    f = VectorField(model.block, model.time, AttentionMask.build(None, False), None, None, NFECounter())
    h = torch.randn(2, 5, DIM)
    gap = (f(torch.tensor(0.0), h) - f(torch.tensor(0.5), h)).abs().max()
    assert gap == 0 if time == "none" else gap > 1e-4


def test_state_dict_round_trip_and_config_from_json(tmp_path: Path) -> None:
    model = ode(time="concat", positions="rotary", method="midpoint")
    torch.save({"config": asdict(model.config), "state": model.state_dict()}, tmp_path / "ode.pt")
    saved = torch.load(tmp_path / "ode.pt")
    twin = ODEEncoder(saved["config"])  # a dict, as read back from a checkpoint's JSON
    twin.load_state_dict(saved["state"])
    x, mask = padded_batch()
    torch.testing.assert_close(twin.eval()(x, mask), model(x, mask), atol=0, rtol=0)
    assert isinstance(twin, Backbone) and twin.dim == DIM
    assert {k.split(".")[0] for k in model.state_dict()} == {"time", "block", "norm"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"method": "rk45"},
            r"ODEConfig\.method='rk45' is not known; choose one of euler, midpoint, rk4, dopri5",
        ),
        ({"time": "film"}, r"ODEConfig\.time='film' is not known"),
        ({"steps": 0}, r"ODEConfig\.steps=0 must be >= 1"),
        ({"dim": 30}, r"ODEConfig\.dim=30 is not divisible by heads=4"),
        ({"t1": 0.0}, r"ODEConfig\.t1=0\.0 must be a finite value > 0"),
        ({"rtol": -1.0}, r"ODEConfig\.rtol=-1\.0"),
        ({"time_features": 3}, r"ODEConfig\.time_features=3 must be even"),
        ({"layer_scale_init": -1.0}, r"layer_scale_init=-1\.0 must be a finite value >= 0"),
    ],
)
def test_config_errors_name_the_field_and_the_fix(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ODEConfig(**({"dim": DIM} | options))


def test_shipped_config_matches_the_transformer_size_and_runs() -> None:
    transformer = sum(p.numel() for p in build("small.yaml").parameters())
    model = build("ode.yaml")
    assert isinstance(model, ODEEncoder)
    assert 0.8 <= model.num_parameters() / transformer <= 1.2, (model.num_parameters(), transformer)
    assert model.eval()(torch.randn(1, 6, 128)).shape == (1, 6, 128)
    assert model.last_nfe == 4  # midpoint, 2 steps
    assert model.no_weight_decay() == {"positions.weight"}


def test_an_adaptive_solve_that_would_not_end_says_which_setting_to_change() -> None:
    model = lively(ode(method="dopri5", rtol=1e-12, atol=1e-12, max_steps=2), 30.0)
    with pytest.raises(RuntimeError, match=r"dopri5 needed more than max_steps=2 steps .*raise max_steps"):
        model(torch.randn(1, 5, DIM))
