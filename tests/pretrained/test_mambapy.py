"""mambapy's pure-PyTorch Mamba as the reference: tiny random models converted through the key map give the
same outputs as mambapy's parallel and sequential paths, and a wrong weight or a wrong map is caught."""

from __future__ import annotations

import dataclasses

import mambapy.mamba as mambapy_mamba
import mambapy.vim as mambapy_vim
import pytest
import torch
from torch import nn

from tabrasa.backbone import Mamba
from tabrasa.backbone.selective_scan import ScanInputs, selective_scan
from tabrasa.pretrained.engine import CheckpointMismatchError, KeyMap, check_fit, map_keys, shapes_of
from tabrasa.pretrained.mambapy import export_mambapy, from_mambapy, key_map, load_mambapy, translate
from tests.pretrained.helpers import assert_match


def randomise(model: nn.Module) -> nn.Module:
    """Norm gains start at 1, D at 1 and A_log on a fixed grid: perturb every tensor so no swap can hide."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model.eval()


def reference(layout: str, seed: int = 0, **overrides: object) -> nn.Module:
    torch.manual_seed(seed)
    if layout == "vim":
        config = mambapy_vim.MambaConfig(d_model=32, n_layers=2, d_state=8, **overrides)
        return randomise(mambapy_vim.VMamba(config))
    config = mambapy_mamba.MambaConfig(d_model=32, n_layers=2, d_state=8, **overrides)
    return randomise(mambapy_mamba.Mamba(config))


def inputs(seed: int = 5) -> torch.Tensor:
    torch.manual_seed(seed)
    return torch.randn(2, 11, 32)  # not a power of two: mambapy's pscan pads, ours does not


@pytest.mark.parametrize("pscan", [True, False], ids=["mambapy-pscan", "mambapy-sequential"])
def test_one_direction_matches_mambapy(pscan: bool) -> None:
    ref = reference("mamba", pscan=pscan)
    ours = from_mambapy(ref, "mamba")
    assert not ours.config.bidirectional and not ours.config.final_norm
    x = inputs()
    with torch.no_grad():
        assert_match(f"mambapy mamba (pscan={pscan})", ours(x), ref(x))


def test_our_sequential_scan_matches_mambapy_too() -> None:
    ref = reference("mamba", pscan=False)
    ours = Mamba(dataclasses.replace(translate(dataclasses.asdict(ref.config), "mamba"), scan="sequential"))
    load_mambapy(ours, ref.state_dict(), "mamba")
    x = inputs()
    with torch.no_grad():
        assert_match("mambapy mamba, both sequential", ours(x), ref(x))


def test_bidirectional_matches_mambapy_vision_mamba() -> None:
    ref = reference("vim", seed=1)
    ours = from_mambapy(ref, "vim")
    assert ours.config.bidirectional
    x = inputs()
    with torch.no_grad():
        assert_match("mambapy vim (bidirectional)", ours(x), ref(x))


def test_the_parallel_scan_matches_mambapys_sequential_scan() -> None:
    """In float64, so the comparison sees the algorithm rather than float32 rounding of outputs near 50."""
    block = reference("mamba", pscan=False).layers[0].mixer
    torch.manual_seed(3)
    B, L, E, N = 2, 13, block.config.d_inner, block.config.d_state
    u, delta = torch.randn(B, L, E), nn.functional.softplus(torch.randn(B, L, E))
    b, c = torch.randn(B, L, N), torch.randn(B, L, N)
    a, d = -torch.exp(block.A_log.detach()), block.D.detach()
    args = [t.double() for t in (u, delta, a, b, c, d)]
    expected = block.selective_scan_seq(*args)
    error = assert_match(
        "parallel scan vs mambapy selective_scan_seq (float64)", selective_scan(ScanInputs(*args)), expected
    )
    assert error < 1e-12


def test_streaming_matches_mambapy_step() -> None:
    ref = reference("mamba", seed=2)
    ours = from_mambapy(ref, "mamba")
    x = inputs()
    caches = [(None, torch.zeros(2, ref.config.d_inner, ref.config.d_conv - 1)) for _ in ref.layers]
    state = ours.init_state(2)
    expected, streamed = [], []
    with torch.no_grad():
        for t in range(x.shape[1]):
            y, caches = ref.step(x[:, t], caches)
            out, state = ours.step(state, x[:, t])
            expected.append(y)
            streamed.append(out)
    assert_match("step vs mambapy step", torch.stack(streamed, 1), torch.stack(expected, 1))


def test_counter_a_perturbed_weight_or_a_wrong_map_is_caught() -> None:
    ref = reference("mamba")
    x = inputs()
    ours = from_mambapy(ref, "mamba")
    with torch.no_grad():
        ours.layers[1].mixer.ssm.D[0] += 0.5
        assert (ours(x) - ref(x)).abs().max() > 1e-3
    # A map that swaps the two layers' in_proj loads without a key error, and the outputs show it.
    rules = dict(key_map("mamba").rules)
    del rules["layers.{}.mixer.in_proj.weight"]
    swap = {f"layers.{i}.mixer.in_proj.weight": f"layers.{1 - i}.mixer.in_proj.weight" for i in (0, 1)}
    mapped = map_keys(ref.state_dict(), KeyMap(rules | swap))
    wrong = Mamba(ours.config)
    check_fit(mapped.state, shapes_of(wrong.state_dict()))
    wrong.load_state_dict(mapped.state)
    with torch.no_grad():
        assert (wrong(x) - ref(x)).abs().max() > 1e-3


def test_unknown_missing_and_misshaped_keys_are_refused() -> None:
    ref = reference("mamba")
    state = ref.state_dict()
    model = Mamba(translate(dataclasses.asdict(ref.config), "mamba"))
    with pytest.raises(
        CheckpointMismatchError, match=r"unknown source keys \(1\):\n    layers.0.mixer.extra"
    ):
        load_mambapy(model, state | {"layers.0.mixer.extra": torch.zeros(1)}, "mamba")
    without_d = {k: v for k, v in state.items() if k != "layers.1.mixer.D"}
    with pytest.raises(CheckpointMismatchError, match=r"does not fill[^\n]*\n    layers.1.mixer.ssm.D"):
        load_mambapy(model, without_d, "mamba")
    # A one-direction checkpoint leaves a bidirectional model's reverse scans random: refused.
    with pytest.raises(CheckpointMismatchError, match="ssm_reverse"):
        load_mambapy(Mamba(dataclasses.replace(model.config, bidirectional=True)), state, "mamba")
    # The vim layout's reverse keys are unknown to the one-direction map.
    with pytest.raises(CheckpointMismatchError, match="A_log_b"):
        load_mambapy(model, reference("vim").state_dict(), "mamba")


def test_export_gives_back_mambapys_state_exactly() -> None:
    for layout in ("mamba", "vim"):
        ref = reference(layout)
        exported = export_mambapy(from_mambapy(ref, layout), layout)  # type: ignore[arg-type]
        state = ref.state_dict()
        assert set(exported) == set(state)
        assert all(torch.equal(exported[k], state[k]) for k in state)


def test_variants_tabrasa_cannot_reproduce_are_refused() -> None:
    config = dataclasses.asdict(mambapy_mamba.MambaConfig(d_model=32, n_layers=1, inner_layernorms=True))
    with pytest.raises(ValueError, match="inner_layernorms"):
        translate(config, "mamba")
    with pytest.raises(ValueError, match="layout 'jamba' is not known"):
        key_map("jamba")  # type: ignore[arg-type]
