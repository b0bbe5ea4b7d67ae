"""The Mamba backbone: shapes, exact masking, reversal within lengths, scan paths that agree, the preset."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch
import yaml
from jsonargparse import ArgumentParser

from tabrasa.backbone import Backbone, Mamba, MambaConfig
from tabrasa.backbone import selective_scan as selective_scan_module
from tabrasa.backbone.selective_scan import parallel_scan, resolved_scan, sequential_scan
from tabrasa.backbone.sequence_lstm import reversal_index

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "backbone"
TOL = {"atol": 1e-5, "rtol": 1e-5}


def tiny(seed: int = 0, **overrides: object) -> Mamba:
    torch.manual_seed(seed)
    return Mamba(MambaConfig(**{"dim": 32, "depth": 2, "d_state": 8, "dropout": 0.0, **overrides})).eval()


def padded_batch(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x (2, 8, 32), and the same rows followed by 4 random padding tokens with their mask."""
    torch.manual_seed(seed)
    x = torch.randn(2, 8, 32)
    padded = torch.cat([x, 100 * torch.randn(2, 4, 32)], dim=1)
    mask = torch.arange(12)[None].expand(2, -1) < 8
    return x, padded, mask


def build(name: str) -> torch.nn.Module:
    parser = ArgumentParser()
    parser.add_argument("--backbone", type=torch.nn.Module)
    cfg = parser.parse_object({"backbone": yaml.safe_load((CONFIGS / name).read_text())})
    return parser.instantiate_classes(cfg).backbone


def test_shapes_and_the_backbone_protocol() -> None:
    model = tiny()
    assert isinstance(model, Backbone) and model.dim == 32
    assert model(torch.randn(3, 8, 32)).shape == (3, 8, 32)
    assert model(torch.randn(1, 1, 32)).shape == (1, 1, 32)  # one token: the two scans agree on it
    with pytest.raises(ValueError, match=r"expected \(batch, tokens, 32\)"):
        model(torch.randn(2, 8, 16))
    with pytest.raises(ValueError, match="expected bool"):
        model(torch.randn(2, 8, 32), torch.ones(2, 8))


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bidirectional", "causal"])
@pytest.mark.parametrize("scan", ["parallel", "sequential"])
def test_padding_never_changes_real_tokens(bidirectional: bool, scan: str) -> None:
    model = tiny(bidirectional=bidirectional, scan=scan)
    x, padded, mask = padded_batch()
    out = model(padded, mask)
    torch.testing.assert_close(out[:, :8], model(x), **TOL)
    assert torch.all(out[:, 8:] == 0)


def test_counter_padding_read_as_tokens_changes_a_bidirectional_model() -> None:
    """The check above can fail: without the mask, the reverse scan starts on the padding and carries it
    into every real token (a causal model never looks ahead, so only the bidirectional one shows it)."""
    x, padded, _ = padded_batch()
    assert (tiny()(padded)[:, :8] - tiny()(x)).abs().max() > 1e-3
    causal = tiny(bidirectional=False)
    torch.testing.assert_close(causal(padded)[:, :8], causal(x), **TOL)


def test_padding_inside_a_row_is_removed_not_read() -> None:
    model = tiny()
    torch.manual_seed(2)
    x = torch.randn(1, 6, 32)
    holes = torch.tensor([[True, False, True, True, False, False, True, True, True]])
    spread = torch.randn(1, 9, 32)
    spread[holes] = x[0]
    out = model(spread, holes)
    torch.testing.assert_close(out[holes], model(x)[0], **TOL)
    assert torch.all(out[~holes] == 0)


def test_a_fully_padded_row_gives_zeros_and_finite_gradients() -> None:
    model = tiny()
    x = torch.randn(2, 5, 32, requires_grad=True)
    mask = torch.tensor([[True] * 5, [False] * 5])
    out = model(x, mask)
    assert torch.isfinite(out).all() and torch.all(out[1] == 0)
    torch.testing.assert_close(out[0], model(x[:1])[0], **TOL)
    out.pow(2).sum().backward()
    assert torch.isfinite(x.grad).all() and torch.all(x.grad[1] == 0)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())


def test_the_reverse_scan_runs_within_each_row_length() -> None:
    model = tiny(depth=1)
    x, padded, mask = padded_batch()
    # The first token hears the last real one through the reverse scan, not through the causal one (at
    # initialisation Δ is small, so the effect is small but far above rounding).
    later = padded.clone()
    later[:, 7] = torch.randn(2, 32)
    assert (model(later, mask)[:, 0] - model(padded, mask)[:, 0]).abs().max() > 1e-5
    causal = tiny(depth=1, bidirectional=False)
    assert torch.equal(causal(later, mask)[:, :7], causal(padded, mask)[:, :7])
    # counter-test: reversing over all 12 positions starts the reverse scan on the padding
    layer, real = model.layers[0], mask
    exact = layer(padded, real, reversal_index(mask.sum(1), 12, padded.device))
    unaware = layer(padded, real, reversal_index(torch.full((2,), 12), 12, padded.device))
    torch.testing.assert_close(exact[:, :8], layer(x, None, reversal_index(torch.full((2,), 8), 8, x.device)))
    assert (unaware[:, :8] - exact[:, :8]).abs().max() > 1e-3


@pytest.mark.parametrize("scan", ["parallel", "chunked"])
def test_every_scan_path_agrees_with_the_sequential_reference(scan: str) -> None:
    reference = tiny(scan="sequential")
    other = tiny(scan=scan)
    other.load_state_dict(reference.state_dict())
    _, padded, mask = padded_batch()
    results = []
    for model in (reference, other):
        out = model(padded, mask)
        results.append((out, torch.autograd.grad(out.pow(2).sum(), list(model.parameters()))))
    torch.testing.assert_close(results[0][0], results[1][0], **TOL)
    for a, b in zip(results[0][1], results[1][1], strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_auto_scan_takes_the_chunked_loop_on_the_cpu_and_the_parallel_scan_on_an_accelerator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert resolved_scan("auto", torch.device("cpu")) == "chunked"
    assert resolved_scan("auto", torch.device("cuda")) == "parallel"
    assert resolved_scan("parallel", torch.device("cpu")) == "parallel"  # an explicit choice stays

    def refuse(*args: torch.Tensor, **kwargs: object) -> torch.Tensor:
        raise AssertionError("a path other than the chunked loop ran")

    monkeypatch.setattr(selective_scan_module, "parallel_scan", refuse)
    monkeypatch.setattr(selective_scan_module, "sequential_scan", refuse)
    _, padded, mask = padded_batch()
    tiny(scan="auto")(padded, mask)  # on this CPU: the chunked loop, neither patched path
    for explicit in ("parallel", "sequential"):  # counter-test: the patches bite
        with pytest.raises(AssertionError, match="other than the chunked"):
            tiny(scan=explicit)(padded, mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_streaming_steps_reproduce_the_parallel_forward(dtype: torch.dtype) -> None:
    model = tiny(bidirectional=False).to(dtype)
    x = torch.randn(2, 8, 32, dtype=dtype)
    state = model.init_state(2)
    assert state.numel() == 2 * model.state_size()
    steps = []
    for t in range(8):
        out, state = model.step(state, x[:, t])
        steps.append(out)
    torch.testing.assert_close(torch.stack(steps, dim=1), model(x), atol=1e-5, rtol=0)


def test_streaming_refuses_a_bidirectional_model() -> None:
    with pytest.raises(ValueError, match="bidirectional: false to stream"):
        tiny().init_state(1)


def test_state_size_counts_every_layer_and_direction() -> None:
    config = MambaConfig(dim=32, depth=3, d_state=8, d_conv=4, expand=2)
    assert config.state_size() == 3 * 2 * 64 * (8 + 3)
    assert dataclasses.replace(config, bidirectional=False).state_size() == 3 * 64 * 11


@pytest.mark.parametrize("length", [1, 2, 7, 16, 33])
def test_the_parallel_scan_matches_the_loop_at_any_length(length: int) -> None:
    torch.manual_seed(length)
    a = torch.rand(2, length, 3, 4, dtype=torch.float64)
    x = torch.randn(2, length, 3, 4, dtype=torch.float64)
    torch.testing.assert_close(parallel_scan(a, x), sequential_scan(a, x))
    small = (a[:1, :, :1, :2].clone().requires_grad_(), x[:1, :, :1, :2].clone().requires_grad_())
    assert torch.autograd.gradcheck(parallel_scan, small)  # the hand-written backward (a reverse scan)


def test_gradients_reach_every_parameter() -> None:
    model = tiny().train()
    x = torch.randn(2, 8, 32, requires_grad=True)
    model(x, torch.tensor([[True] * 8, [True] * 5 + [False] * 3])).pow(2).mean().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, name
    assert x.grad is not None and x.grad.abs().sum() > 0


def test_state_dict_round_trip(tmp_path: Path) -> None:
    model = tiny(seed=3)
    torch.save(model.state_dict(), tmp_path / "mamba.pt")
    fresh = tiny(seed=4)
    x, padded, mask = padded_batch()
    assert (fresh(x) - model(x)).abs().max() > 1e-3
    fresh.load_state_dict(torch.load(tmp_path / "mamba.pt", weights_only=True))
    torch.testing.assert_close(fresh(padded, mask), model(padded, mask), atol=0, rtol=0)
    assert {"layers.1.mixer.ssm_reverse.A_log", "norm.weight"} <= set(model.state_dict())
    assert Mamba(dataclasses.asdict(model.config)).config == model.config  # from a checkpoint's JSON


def test_a_log_is_declared_exempt_from_weight_decay() -> None:
    # tabrasa.tasks.weight_decay reads each module's no_weight_decay(), names relative to that module.
    for module in tiny().modules():
        hook = getattr(module, "no_weight_decay", None)
        if hook is not None:
            assert hook() == {"A_log"} and module.A_log.ndim == 2


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dim", 0, r"MambaConfig.dim=0 must be an integer >= 1"),
        ("depth", 1.5, r"MambaConfig.depth=1.5 must be an integer >= 1"),
        ("d_state", -1, r"MambaConfig.d_state=-1"),
        ("d_conv", 0, r"MambaConfig.d_conv=0"),
        ("expand", 0, r"MambaConfig.expand=0"),
        ("dt_rank", "big", r"dt_rank='big' must be 'auto'"),
        ("dt_rank", 0, r"dt_rank=0 must be 'auto'"),
        ("dropout", 1.0, r"MambaConfig.dropout=1.0 must be in \[0, 1\)"),
        ("scan", "fused", r"scan='fused' is not known; choose one of auto, parallel, sequential, chunked"),
        ("norm_eps", 0.0, r"MambaConfig.norm_eps=0.0 must be a finite value > 0"),
    ],
)
def test_config_errors_name_the_field_and_the_fix(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MambaConfig(**{field: value})


def test_dt_rank_auto_follows_mamba() -> None:
    assert (
        MambaConfig(dim=128).rank == 8 and MambaConfig(dim=40).rank == 3 and MambaConfig(dt_rank=5).rank == 5
    )


def test_the_preset_builds_and_matches_the_transformer_size() -> None:
    text = (CONFIGS / "mamba.yaml").read_text()
    model, transformer = build("mamba.yaml"), build("small.yaml")
    assert type(model) is Mamba and isinstance(model, Backbone)
    count, reference = model.num_parameters(), sum(p.numel() for p in transformer.parameters())
    stated = [int(n.replace(",", "")) for n in re.findall(r"(\d{1,3}(?:,\d{3})+) parameters", text)]
    assert stated == [count], f"the comment states {stated}, the preset has {count:,}"
    assert f"of the {reference:,} of" in text
    assert 0.8 <= count / reference <= 1.2, f"mamba {count:,} vs transformer {reference:,}"
