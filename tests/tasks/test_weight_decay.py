"""Weight decay by role for every embedder and backbone: matrices and kernels decay (the patch and frame
projections included), biases, norms, token tables, position tables and class/register tokens do not."""

from __future__ import annotations

import pytest
from torch import nn

from tabrasa.backbone import (
    Encoder,
    EncoderConfig,
    PatchGridCNN,
    PixelCNN,
    SequenceCNN,
    SequenceLSTM,
    SpectrogramCNN,
)
from tabrasa.errors import UserError
from tabrasa.tasks import Classifier
from tabrasa.tasks.weight_decay import NO_DECAY_MODULES, decays, param_groups
from tabrasa.tokenizers.ast import ASTTokenizer
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.tokenizers.deit import DeitEmbedder
from tabrasa.tokenizers.esm import EsmProteinTokenizer
from tabrasa.tokenizers.image import ImageTokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer
from tabrasa.tokenizers.text import TextTokenizer, train_subword_tokenizer
from tabrasa.tokenizers.whisper import WhisperTokenizer

LAYERS = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.LSTM)


def tokenizers() -> dict[str, Tokenizer]:
    words = TextTokenizer(
        train_subword_tokenizer(["a good film", "a bad plot"] * 5, vocab_size=40), max_length=16
    )
    return {
        "text": words,
        "bytes": ByteTokenizer(max_length=16),
        "image": ImageTokenizer(patch_size=4, channels=1, image_size=8),
        "audio frames": AudioTokenizer(n_mels=16),
        "audio patches": AudioTokenizer(n_mels=16, patch_size=[4, 16]),
        "protein": ProteinTokenizer(max_length=16),
        "esm": EsmProteinTokenizer(max_length=16),
        "ast": ASTTokenizer(n_mels=16, frames=32, patch_size=(8, 8), stride=(8, 8)),
        "whisper": WhisperTokenizer(seconds=1.0),
    }


def embedders() -> dict[str, nn.Module]:
    out = {name: tok.embedder(32) for name, tok in tokenizers().items()}
    out["deit"] = DeitEmbedder(1, 4, 32)
    return out


@pytest.mark.parametrize("name", list(embedders()))
def test_every_embedder_decays_its_projections_and_nothing_else(name: str) -> None:
    embedder = embedders()[name]
    roles = decays(embedder)
    for prefix, module in embedder.named_modules():
        for pname, param in module.named_parameters(recurse=False):
            full = f"{prefix}.{pname}" if prefix else pname
            if isinstance(module, LAYERS) and param.ndim >= 2:
                assert roles[full], f"{name}: projection {full} is not decayed"
            elif isinstance(module, NO_DECAY_MODULES) or param.ndim < 2:
                assert not roles[full], f"{name}: {full} (table, norm or bias) is decayed"
            else:  # a bare parameter of a custom module: a class/distillation token or a table
                assert not roles[full], f"{name}: {full} must be listed in no_weight_decay()"


def image_classifier() -> Classifier:
    return Classifier(
        ImageTokenizer(patch_size=4, channels=1, image_size=8), 10, Encoder(EncoderConfig(dim=32))
    )


def exempt_by_name(model: nn.Module, weight_decay: float) -> list[dict[str, object]]:
    """The old rule, kept to show the test below catches it: every name containing "embed" was exempt."""
    named = list(model.named_parameters())
    decay = [p for n, p in named if p.ndim >= 2 and "embed" not in n]
    rest = [p for n, p in named if not (p.ndim >= 2 and "embed" not in n)]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]


def test_the_image_patch_projection_is_decayed() -> None:
    """The bug: every name containing "embed" was exempt, which caught `embedder.proj.weight`."""
    model = image_classifier()
    decayed, exempt = param_groups(model, 0.05)
    decayed_ids = {id(p) for p in decayed["params"]}  # type: ignore[union-attr]
    name = next(n for n, p in model.named_parameters() if p is model.embedder.proj.weight)
    assert "embed" in name, f"{name}: the projection's own name no longer holds what the old rule matched"
    assert id(model.embedder.proj.weight) in decayed_ids
    assert id(model.embedder.cls_token) not in decayed_ids
    assert id(model.backbone.positions.weight) not in decayed_ids
    assert id(model.backbone.blocks[0].attn.qkv.weight) in decayed_ids
    assert id(model.backbone.blocks[0].norm1.weight) not in decayed_ids
    assert exempt["weight_decay"] == 0.0 and decayed["weight_decay"] == 0.05


def test_the_old_name_rule_fails_the_projection_check() -> None:
    """Counter-test: grouped by the old name rule, the projection lands in the exempt group."""
    model = image_classifier()
    decayed, _ = exempt_by_name(model, 0.05)
    assert id(model.embedder.proj.weight) not in {id(p) for p in decayed["params"]}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "backbone",
    [
        Encoder(EncoderConfig(dim=32, register_tokens=2, layer_scale_init=1e-5)),
        SequenceCNN(dim=32),
        SequenceLSTM(dim=32),
        PatchGridCNN(dim=32),
        PixelCNN(dim=32),
        SpectrogramCNN(dim=32),
    ],
    ids=lambda b: type(b).__name__,
)
def test_backbones_decay_matrices_only(backbone: nn.Module) -> None:
    roles = decays(backbone)
    assert any(roles.values())
    for name, param in backbone.named_parameters():
        if param.ndim < 2 or name in {"positions.weight", "register_tokens"}:
            assert not roles[name], name


def test_a_hook_naming_a_missing_parameter_is_an_error() -> None:
    class Wrong(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def no_weight_decay(self) -> set[str]:
            return {"cls_tokn"}

    with pytest.raises(ValueError, match="cls_tokn"):
        decays(Wrong())
    assert issubclass(UserError, ValueError)
