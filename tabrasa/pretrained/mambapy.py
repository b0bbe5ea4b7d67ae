"""mambapy (github.com/alxndrTL/mamba.py), the pure-PyTorch Mamba, into tabrasa's Mamba backbone.

Two source layouts, chosen by name, never by looking at the keys: "mamba" is `mambapy.mamba.Mamba`, one
causal scan per layer with the official mamba_simple names under `layers.{i}.mixer.*`; "vim" is
`mambapy.vim.VMamba`, Vision Mamba's bidirectional layer, whose reverse scan carries a `_b` suffix
(`conv1d_b`, `x_proj_b`, `dt_proj_b`, `A_log_b`, `D_b`). Neither stack has a final norm (mambapy's LM
wrapper adds `norm_f`), so the translated config has final_norm=False.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, Literal

import torch

from tabrasa.backbone.mamba import Mamba
from tabrasa.backbone.mamba_config import MambaConfig
from tabrasa.pretrained.engine import KeyMap, Mapped, check_fit, export_keys, map_keys, shapes_of
from tabrasa.pretrained.families import refuse

Layout = Literal["mamba", "vim"]
SSM_KEYS = ("conv1d.weight", "conv1d.bias", "x_proj.weight", "dt_proj.weight", "dt_proj.bias", "A_log", "D")
SHARED_KEYS = ("in_proj.weight", "in_proj.bias", "out_proj.weight", "out_proj.bias")


def _rules(bidirectional: bool) -> dict[str, str]:
    rules = {"layers.{}.norm.weight": "layers.{}.norm.weight"}
    rules |= {f"layers.{{}}.mixer.{k}": f"layers.{{}}.mixer.{k}" for k in SHARED_KEYS}
    rules |= {f"layers.{{}}.mixer.{k}": f"layers.{{}}.mixer.ssm.{k}" for k in SSM_KEYS}
    if bidirectional:
        for key in SSM_KEYS:
            module, _, name = key.rpartition(".")
            source = f"{module}_b.{name}" if module else f"{name}_b"  # conv1d_b.weight, A_log_b
            rules[f"layers.{{}}.mixer.{source}"] = f"layers.{{}}.mixer.ssm_reverse.{key}"
    return rules


KEY_MAPS: dict[Layout, KeyMap] = {"mamba": KeyMap(_rules(False)), "vim": KeyMap(_rules(True))}


def key_map(layout: Layout) -> KeyMap:
    if layout not in KEY_MAPS:
        raise ValueError(f"mambapy layout {layout!r} is not known; choose one of {', '.join(KEY_MAPS)}")
    return KEY_MAPS[layout]


def translate(config: Mapping[str, Any], layout: Layout) -> MambaConfig:
    """A mambapy MambaConfig (as a dict: dataclasses.asdict(model.config)) → tabrasa's MambaConfig."""
    name = f"mambapy {layout}"
    refuse(bool(config.get("inner_layernorms")), name, "RMSNorm on Δ, B and C (inner_layernorms, Jamba)")
    refuse(bool(config.get("mup")), name, "muP (RMSNorm without gains)")
    bidirectional = layout == "vim" and bool(config.get("bidirectional", True))
    refuse(bidirectional and not config.get("divide_output", True), name, "summed directions (divide_output)")
    return MambaConfig(
        dim=config["d_model"],
        depth=config["n_layers"],
        d_state=config.get("d_state", 16),
        d_conv=config.get("d_conv", 4),
        expand=config.get("expand_factor", 2),
        dt_rank=config.get("dt_rank", "auto"),
        bidirectional=bidirectional,
        dropout=0.0,
        norm_eps=config.get("rms_norm_eps", 1e-5),
        final_norm=False,
        bias=bool(config.get("bias", False)),
        conv_bias=bool(config.get("conv_bias", True)),
    )


def load_mambapy(
    model: Mamba, state: Mapping[str, torch.Tensor], layout: Layout, source: str = "mambapy state dict"
) -> Mapped:
    """Map `state` (a mambapy model's state_dict) into `model`, strictly: an unknown source key, a model key
    left unfilled or a shape that differs raises CheckpointMismatchError and loads nothing."""
    mapped = map_keys(state, key_map(layout), source)
    check_fit(mapped.state, shapes_of(model.state_dict()), source)
    model.load_state_dict(mapped.state, strict=True)
    return mapped


def from_mambapy(reference: torch.nn.Module, layout: Layout) -> Mamba:
    """A tabrasa Mamba with the config and weights of a mambapy `Mamba` ("mamba") or `VMamba` ("vim")."""
    model = Mamba(translate(asdict(reference.config), layout))  # type: ignore[call-overload]
    load_mambapy(model, reference.state_dict(), layout, f"mambapy {layout} model")
    return model


def export_mambapy(model: Mamba, layout: Layout) -> dict[str, torch.Tensor]:
    """The inverse of load_mambapy: tabrasa's state dict in mambapy's key layout."""
    return export_keys(model.state_dict(), key_map(layout))
