"""The config validates itself from its types, keeps one max_len, and names the fix in every error."""

from __future__ import annotations

from typing import get_args

import pytest

from tabrasa.backbone import AttentionConfig, Encoder, EncoderConfig
from tabrasa.backbone.config import Activation, AttentionKind, NormKind, NormPlacement, PositionKind


@pytest.mark.parametrize(
    ("field", "literal"),
    [
        ("norm_placement", NormPlacement),
        ("norm", NormKind),
        ("activation", Activation),
        ("positions", PositionKind),
    ],
)
def test_every_literal_value_is_accepted_and_others_are_refused_with_the_choices(
    field: str, literal: object
) -> None:
    for value in get_args(literal):
        EncoderConfig(dim=32, heads=4, **{field: value})
    choices = ", ".join(get_args(literal))
    with pytest.raises(
        ValueError, match=rf"EncoderConfig\.{field}='bogus' is not known; choose one of {choices}"
    ):
        EncoderConfig(dim=32, heads=4, **{field: "bogus"})


def test_attention_kind_is_checked_from_its_literal() -> None:
    choices = ", ".join(get_args(AttentionKind))
    with pytest.raises(ValueError, match=rf"attention\.kind='sparse' is not known; choose one of {choices}"):
        AttentionConfig(kind="sparse")  # type: ignore[arg-type]


def test_one_max_len_sizes_positions_and_lowrank_projections() -> None:
    config = EncoderConfig(
        dim=32, heads=4, max_len=24, register_tokens=2, attention={"kind": "lowrank", "rank": 4}
    )
    model = Encoder(config)
    assert model.positions.weight.shape == (24, 32)
    assert model.blocks[0].attn.mixer.key_proj.shape == (4, 24 + 2)  # the registers lead every sequence
    assert "max_len" not in AttentionConfig.__dataclass_fields__


def test_a_saved_attention_max_len_loads_when_it_agrees_and_names_the_fix_when_not() -> None:
    old = {"kind": "lowrank", "rank": 4, "max_len": 24}
    assert EncoderConfig(dim=32, heads=4, max_len=24, attention=old).attention.rank == 4
    assert EncoderConfig(dim=32, heads=4, max_len=8, attention={"kind": "full", "max_len": 512})
    with pytest.raises(ValueError, match=r"attention.max_len=24 differs.*set max_len: 24"):
        EncoderConfig(dim=32, heads=4, max_len=8, attention=old)


def test_options_refuse_bad_values_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"register_tokens=2 with causal=True.*register_tokens: 0 or causal"):
        EncoderConfig(dim=32, heads=4, register_tokens=2, causal=True)
    with pytest.raises(ValueError, match=r"register_tokens=-1 must be >= 0"):
        EncoderConfig(dim=32, heads=4, register_tokens=-1)
    with pytest.raises(ValueError, match=r"layer_scale_init=-0.1 must be a finite value >= 0.*None"):
        EncoderConfig(dim=32, heads=4, layer_scale_init=-0.1)
    with pytest.raises(ValueError, match=r"qk_norm=True needs a norm.*norm: layernorm"):
        EncoderConfig(dim=32, heads=4, qk_norm=True, norm="none")


def test_options_are_off_by_default() -> None:
    config = EncoderConfig()
    assert (config.layer_scale_init, config.register_tokens, config.qk_norm) == (None, 0, False)
    assert config.qkv_bias is config.bias is True
