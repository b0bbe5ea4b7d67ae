"""GAU and FLASH (tabrasa/backbone/gau.py): the Backbone contract, padding, both forms against their
explicit formulas and each other, configs. Parity: tests/pretrained/test_flash_pytorch.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
import yaml
from jsonargparse import ArgumentParser
from torch import nn

from tabrasa.backbone import Backbone, GAUConfig, GAUEncoder
from tabrasa.backbone.gau import GatedAttentionUnit, relu2

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "backbone"
B, DIM = 2, 32

FORMS: dict[str, dict[str, Any]] = {
    "quadratic": {"form": "quadratic"},
    "chunked": {"form": "chunked", "chunk": 4},  # 13 tokens: groups of 4, 4, 4 and 1
}
VARIANTS: dict[str, dict[str, Any]] = {
    "rotary": {},
    "partial_rotary_scalenorm": {"rotary_dim": 8, "norm": "scalenorm"},
    "learned_laplace_shift": {"positions": "learned", "kernel": "laplace", "shift_tokens": True},
    "none_rmsnorm": {"positions": "none", "norm": "rmsnorm"},
}


def build(name: str) -> nn.Module:
    """A backbone YAML as `--model.backbone` reads it (as tests/backbone/test_baselines.py does)."""
    parser = ArgumentParser()
    parser.add_argument("--backbone", type=nn.Module)
    cfg = parser.parse_object({"backbone": yaml.safe_load((CONFIGS / name).read_text())})
    return parser.instantiate(cfg).backbone


def padding_is_invisible(model: nn.Module) -> None:
    """Right padding full of noise gives the real tokens the same outputs as the sequence alone (the
    check of tests/backbone/test_invariants.py)."""
    x = torch.randn(1, 9, DIM)
    padded = torch.cat((x, 100 * torch.randn(1, 4, DIM)), dim=1).expand(B, -1, -1)
    mask = torch.ones(B, 13, dtype=torch.bool)
    mask[0, 9:] = False
    out = model(padded, mask)
    torch.testing.assert_close(out[0, :9], model(x)[0], atol=1e-5, rtol=1e-5)
    assert torch.all(out[0, 9:] == 0)


def gau(form: str = "quadratic", seed: int = 0, **options: Any) -> GAUEncoder:
    """Tiny, with queries and keys large enough that the attention matters (γ starts at N(0, 0.02)), and
    keys near their queries: relu² attention whose scores are all negative is zero, and so its gradient."""
    torch.manual_seed(seed)
    config = GAUConfig(dim=DIM, depth=2, qk_dim=16, max_len=16, **(FORMS[form] | options))
    model = GAUEncoder(config).eval()
    with torch.no_grad():
        for unit in model.units:
            for p in (unit.scale_offset.gamma, unit.scale_offset.beta):
                queries = torch.randn_like(p[: len(p) // 2])
                p.copy_(torch.cat((queries, queries + 0.5 * torch.randn_like(queries))))
    return model


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("form", list(FORMS))
def test_shapes_protocol_and_padding_never_changes_real_tokens(form: str, variant: str) -> None:
    model = gau(form, **VARIANTS[variant])
    assert isinstance(model, Backbone) and model.dim == DIM
    assert model(torch.randn(3, 5, DIM)).shape == (3, 5, DIM)
    padding_is_invisible(model)


@pytest.mark.parametrize("form", list(FORMS))
def test_counter_padding_is_visible_without_the_mask_or_with_the_padded_length(form: str) -> None:
    """The check above can fail: unmasked padding changes real tokens, and so does flash-pytorch's 1/n over
    the padded length instead of the real tokens (units run here with the count of all 13 tokens)."""
    model = gau(form)
    x = torch.randn(1, 9, DIM)
    padded = torch.cat((x, 100 * torch.randn(1, 4, DIM)), dim=1)
    alone = model(x)
    assert (model(padded)[0, :9] - alone[0]).abs().max() > 1e-3
    mask = torch.ones(1, 13, dtype=torch.bool)
    mask[0, 9:] = False
    keep, rotation = mask[..., None].float(), model.rotary(13)
    h = padded
    for unit in model.units:
        h = unit(h, keep, torch.full((1, 1, 1), 13.0), rotation)
    assert (model.norm(h)[0, :9] - alone[0]).abs().max() > 1e-3


@pytest.mark.parametrize("form", list(FORMS))
def test_a_fully_padded_row_gives_zeros_not_nan_and_leaves_the_other_row(form: str) -> None:
    model = gau(form, kernel="laplace")
    x = torch.randn(2, 6, DIM)
    out = model(x, torch.tensor([[True] * 6, [False] * 6]))
    assert torch.isfinite(out).all() and torch.all(out[1] == 0)
    torch.testing.assert_close(out[0], model(x[:1])[0], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("form", list(FORMS))
def test_gradients_reach_every_parameter(form: str) -> None:
    model = gau(form, positions="learned", shift_tokens=True).train()
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 4:] = False
    # a random readout: the summed squares of a LayerNorm's output are constant, their gradient zero
    (model(torch.randn(2, 7, DIM), mask) * torch.randn(2, 7, DIM)).sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        if not name.startswith("positions"):  # rows past the 7th token get none, rightly
            assert p.grad.abs().sum() > 0, name


def test_state_dict_round_trip_and_config_from_json(tmp_path: Path) -> None:
    model = gau("chunked", rotary_dim=8)
    torch.save({"config": vars(model.config), "state": model.state_dict()}, tmp_path / "gau.pt")
    saved = torch.load(tmp_path / "gau.pt")
    twin = GAUEncoder(saved["config"])  # a dict, as read back from a checkpoint's JSON
    twin.load_state_dict(saved["state"])
    x = torch.randn(2, 9, DIM)
    torch.testing.assert_close(twin.eval()(x), model(x), atol=0, rtol=0)
    assert set(model.state_dict()) == {
        f"units.{i}.{name}"
        for i in range(2)
        for name in (
            "norm.weight", "norm.bias", "hidden.weight", "hidden.bias", "base.weight", "base.bias",
            "scale_offset.gamma", "scale_offset.beta", "out.weight", "out.bias",
        )
    } | {"norm.weight", "norm.bias"}  # fmt: skip


def test_no_weight_decay_names_the_position_table_and_the_query_key_gains() -> None:
    model = gau("chunked", positions="learned")
    assert model.no_weight_decay() <= set(dict(model.named_parameters()))
    assert model.no_weight_decay() == {"positions.weight"} | {
        f"units.{i}.scale_offset.{p}" for i in range(2) for p in ("gamma", "beta")
    }


def dense_chunked(unit: GatedAttentionUnit, x: torch.Tensor, chunk: int) -> torch.Tensor:
    """FLASH's mixed chunk attention written out as one N × N matrix: relu²(q kᵀ / chunk) where i and j
    share a group, plus the linear part's q' k'ᵀ / N everywhere (no rotation)."""
    h = unit.norm(x)
    v, u = F.silu(unit.hidden(h)).chunk(2, dim=-1)
    q, lin_q, k, lin_k = unit.scale_offset(F.silu(unit.base(h))).unbind(1)
    n = x.shape[1]
    group = torch.arange(n) // chunk
    same = (group[:, None] == group[None, :]).float()
    weights = relu2(q @ k.transpose(1, 2) / chunk) * same + lin_q @ lin_k.transpose(1, 2) / n
    return x + unit.out(u * (weights @ v))


@pytest.mark.parametrize("n", [8, 10, 3])
def test_chunked_form_equals_its_dense_formula(n: int) -> None:
    """Groups of 4 over 8 tokens (two full), 10 (a partial last group) and 3 (shorter than one group)."""
    unit = gau("chunked", positions="none").units[0]
    x = torch.randn(2, n, DIM)
    out = unit(x, None, torch.full((2, 1, 1), float(n)), None)
    torch.testing.assert_close(out, dense_chunked(unit, x, 4), atol=1e-5, rtol=1e-5)
    if n > 4:  # counter-test: one group over all tokens is another function
        assert (out - dense_chunked(unit, x, n)).abs().max() > 1e-3


def test_quadratic_and_chunked_forms_agree_when_one_chunk_holds_the_sequence_and_linear_is_off() -> None:
    """A chunked unit whose linear queries/keys are zero and whose one chunk is the whole sequence is the
    quadratic unit (1/chunk = 1/N); with two chunks it is not."""
    quadratic = gau("quadratic", positions="none")
    x = torch.randn(2, 8, DIM)
    for chunk, agree in ((8, True), (4, False)):
        chunked = GAUEncoder(
            GAUConfig(dim=DIM, depth=2, qk_dim=16, form="chunked", chunk=chunk, positions="none")
        )
        state = quadratic.state_dict()
        for i in range(2):
            for name in ("gamma", "beta"):
                q, k = state[f"units.{i}.scale_offset.{name}"]
                state[f"units.{i}.scale_offset.{name}"] = torch.stack(
                    (q, torch.zeros_like(q), k, torch.zeros_like(k))
                )
        chunked.load_state_dict(state)
        gap = (chunked.eval()(x) - quadratic(x)).abs().max()
        assert gap < 1e-5 if agree else gap > 1e-3, (chunk, gap)


def test_quadratic_form_is_permutation_equivariant_without_positions_and_not_with_rotary() -> None:
    x = torch.randn(2, 10, DIM)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(0))
    bag = gau("quadratic", positions="none")
    torch.testing.assert_close(bag(x[:, perm]), bag(x)[:, perm], atol=1e-5, rtol=1e-5)
    rotary = gau("quadratic")
    assert (rotary(x[:, perm]) - rotary(x)[:, perm]).abs().max() > 1e-3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"dim": 0}, r"GAUConfig\.dim=0 must be >= 1"),
        ({"chunk": 0}, r"GAUConfig\.chunk=0"),
        ({"expansion": 0.0}, r"GAUConfig\.expansion=0\.0 .*use a value > 0"),
        ({"form": "linear"}, r"GAUConfig\.form='linear' is not known; choose one of quadratic, chunked"),
        ({"kernel": "softmax"}, r"GAUConfig\.kernel='softmax'"),
        ({"norm": "batchnorm"}, r"GAUConfig\.norm='batchnorm'"),
        ({"rotary_dim": 7}, r"GAUConfig\.rotary_dim=7 must be even"),
        ({"qk_dim": 15}, r"GAUConfig\.rotary_dim=15 must be even .*rotary_dim: null"),
        ({"rotary_dim": 64, "qk_dim": 32}, r"rotary_dim=64 must be even and in \[2, qk_dim=32\]"),
        ({"dropout": 1.0}, r"GAUConfig\.dropout=1\.0 must be in \[0, 1\)"),
    ],
)
def test_config_errors_name_the_field_and_the_fix(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GAUConfig(**options)


def test_bad_inputs_are_refused_in_one_line() -> None:
    model = gau()
    with pytest.raises(ValueError, match=r"expected \(batch, tokens, 32\)"):
        model(torch.randn(2, 5, 16))
    with pytest.raises(ValueError, match="expected bool"):
        model(torch.randn(2, 5, DIM), torch.ones(2, 5))
    with pytest.raises(ValueError, match="rotary position table holds 16"):
        model(torch.randn(1, 17, DIM))


@pytest.mark.parametrize("form", list(FORMS))
def test_shipped_config_matches_the_transformer_size_in_both_forms(form: str) -> None:
    transformer = sum(p.numel() for p in build("small.yaml").parameters())
    model = build("gau.yaml")
    assert isinstance(model, GAUEncoder) and model.config.form == "quadratic"
    if form == "chunked":
        model = GAUEncoder(GAUConfig(**(vars(model.config) | {"form": "chunked"})))
    assert 0.8 <= model.num_parameters() / transformer <= 1.2, (model.num_parameters(), transformer)
    assert model.eval()(torch.randn(1, 6, 128)).shape == (1, 6, 128)
