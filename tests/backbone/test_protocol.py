"""Every backbone satisfies one Protocol, and the YAML presets build the class they name."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml
from jsonargparse import ArgumentParser
from torch import nn

from tabrasa.backbone import (
    Backbone,
    Encoder,
    EncoderConfig,
    GAUConfig,
    GAUEncoder,
    Mamba,
    MambaConfig,
    ODEConfig,
    ODEEncoder,
    PatchGridCNN,
    PixelCNN,
    SequenceCNN,
    SequenceLSTM,
    SpectrogramCNN,
)

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "backbone"
PRESETS = {
    "small.yaml": Encoder,
    "minilm_l6.yaml": Encoder,
    "sequence_cnn.yaml": SequenceCNN,
    "sequence_lstm.yaml": SequenceLSTM,
    "patch_grid_cnn.yaml": PatchGridCNN,
    "pixel_cnn.yaml": PixelCNN,
    "spectrogram_cnn.yaml": SpectrogramCNN,
    "mamba.yaml": Mamba,
    "gau.yaml": GAUEncoder,
    "ode.yaml": ODEEncoder,
}


def build(name: str) -> nn.Module:
    parser = ArgumentParser()
    parser.add_argument("--backbone", type=nn.Module)
    cfg = parser.parse_object({"backbone": yaml.safe_load((CONFIGS / name).read_text())})
    return parser.instantiate_classes(cfg).backbone


@pytest.mark.parametrize(
    "model",
    [
        Encoder(EncoderConfig(dim=32, depth=1, heads=4)),
        SequenceCNN(32, blocks=1),
        SequenceLSTM(32, layers=1),
        PatchGridCNN(32, blocks=1, hidden=8),
        PixelCNN(32, blocks=1),
        SpectrogramCNN(32, blocks=1),
        Mamba(MambaConfig(dim=32, depth=1)),
        GAUEncoder(GAUConfig(dim=32, depth=1, qk_dim=16)),
        ODEEncoder(ODEConfig(dim=32, heads=4)),
    ],
    ids=[
        "encoder",
        "sequence_cnn",
        "sequence_lstm",
        "patch_grid_cnn",
        "pixel_cnn",
        "spectrogram_cnn",
        "mamba",
        "gau",
        "ode",
    ],
)
def test_every_backbone_satisfies_the_protocol(model: nn.Module) -> None:
    assert isinstance(model, Backbone)
    assert model.dim == 32


def test_a_module_without_dim_is_not_a_backbone() -> None:
    class NoWidth(nn.Module):
        def forward(
            self, x: torch.Tensor, mask: torch.Tensor | None = None, *, grid: object = None
        ) -> torch.Tensor:
            return x

    class NoForward:
        dim = 32

    assert not isinstance(NoWidth(), Backbone)
    assert not isinstance(NoForward(), Backbone)


def test_every_preset_is_listed() -> None:
    assert {p.name for p in CONFIGS.glob("*.yaml")} == set(PRESETS)


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_preset_builds_the_backbone_it_names(name: str) -> None:
    model = build(name)
    assert type(model) is PRESETS[name]
    assert isinstance(model, Backbone)
