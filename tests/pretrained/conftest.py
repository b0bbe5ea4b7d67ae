"""Tiny reference models with random weights, built offline and saved in their own libraries' formats."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from tabrasa.tokenizers.text import train_subword_tokenizer

CORPUS = ["the cat sat on the mat", "a dog ate my homework", "tabrasa reads every modality"] * 5


@dataclass
class Reference:
    """A reference model and the folder its library saved it to."""

    model: nn.Module
    folder: Path


def _randomise(model: nn.Module) -> nn.Module:
    """LayerNorm weights and biases start at 1 and 0; perturb them so a wrong mapping cannot hide."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model.eval()


def _save_hf(model: Any, folder: Path) -> Reference:
    model.save_pretrained(folder)
    return Reference(model, folder)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("bert")
    tokenizer = train_subword_tokenizer(CORPUS, vocab_size=60)
    tokenizer.save(str(folder / "tokenizer.json"))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=24, pad_token_id=0,
    )  # fmt: skip
    return _save_hf(_randomise(BertModel(config, add_pooling_layer=True)), folder)


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(1)
    config = GPT2Config(
        vocab_size=50, n_embd=32, n_layer=2, n_head=4, n_positions=16, bos_token_id=0, eos_token_id=0
    )
    return _save_hf(_randomise(GPT2Model(config)), tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def tiny_vit_hf(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(2)
    config = ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=16,
        patch_size=4, num_channels=3,
    )  # fmt: skip
    return _save_hf(_randomise(ViTModel(config, add_pooling_layer=False)), tmp_path_factory.mktemp("vit_hf"))


@pytest.fixture(scope="session")
def tiny_vit_timm(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    import timm
    from timm.models._hub import save_for_hf

    torch.manual_seed(3)
    model = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, img_size=16, patch_size=4, embed_dim=32, depth=2,
        num_heads=4, num_classes=0,
    )  # fmt: skip
    folder = tmp_path_factory.mktemp("vit_timm")
    save_for_hf(_randomise(model), str(folder), safe_serialization=True)
    return Reference(model, folder)


@pytest.fixture(scope="session")
def tiny_esm(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import EsmConfig, EsmModel

    torch.manual_seed(4)
    config = EsmConfig(
        vocab_size=33, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        position_embedding_type="rotary", token_dropout=True, mask_token_id=32, pad_token_id=1,
        emb_layer_norm_before=False, max_position_embeddings=64, layer_norm_eps=1e-5,
    )  # fmt: skip
    return _save_hf(_randomise(EsmModel(config, add_pooling_layer=False)), tmp_path_factory.mktemp("esm2"))


@pytest.fixture(scope="session")
def tiny_esm_fair(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from esm.model.esm2 import ESM2

    torch.manual_seed(5)
    model = _randomise(ESM2(num_layers=2, embed_dim=32, attention_heads=4, token_dropout=True))
    folder = tmp_path_factory.mktemp("esm2_fair")
    torch.save(model.state_dict(), folder / "esm2.pt")
    return Reference(model, folder)


@pytest.fixture(scope="session")
def tiny_ast(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import ASTConfig, ASTModel

    torch.manual_seed(6)
    config = ASTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, num_mel_bins=36,
        max_length=46, patch_size=16, frequency_stride=10, time_stride=10,
    )  # fmt: skip
    return _save_hf(_randomise(ASTModel(config)), tmp_path_factory.mktemp("ast"))


@pytest.fixture(scope="session")
def tiny_roberta(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(7)
    config = RobertaConfig(
        vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=18, pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1,
    )  # fmt: skip
    return _save_hf(_randomise(RobertaModel(config, add_pooling_layer=True)), tmp_path_factory.mktemp("rob"))


@pytest.fixture(scope="session")
def tiny_deit_hf(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import DeiTConfig, DeiTModel

    torch.manual_seed(8)
    config = DeiTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=16,
        patch_size=4, num_channels=3,
    )  # fmt: skip
    return _save_hf(_randomise(DeiTModel(config, add_pooling_layer=True)), tmp_path_factory.mktemp("deit"))


def _save_timm(model: nn.Module, name: str, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from timm.models._hub import save_for_hf

    folder = tmp_path_factory.mktemp(name)
    save_for_hf(_randomise(model), str(folder), safe_serialization=True)
    return Reference(model, folder)


@pytest.fixture(scope="session")
def tiny_deit_timm(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    import timm

    torch.manual_seed(9)
    model = timm.create_model(
        "deit_tiny_distilled_patch16_224", pretrained=False, img_size=16, patch_size=4, embed_dim=32,
        depth=2, num_heads=4, num_classes=0,
    )  # fmt: skip
    return _save_timm(model, "deit_timm", tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_vit_timm_reg(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """Registers outside the position table and LayerScale, as timm's DINOv2-reg models."""
    import timm

    torch.manual_seed(10)
    model = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, img_size=16, patch_size=4, embed_dim=32, depth=2,
        num_heads=4, num_classes=0, reg_tokens=4, no_embed_class=True, class_token=True, init_values=1e-5,
    )  # fmt: skip
    return _save_timm(model, "vit_timm_reg", tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_dinov2_hf(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from transformers import Dinov2Config, Dinov2Model

    torch.manual_seed(11)
    config = Dinov2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2, image_size=16,
        patch_size=4, num_channels=3, layerscale_value=0.5,
    )  # fmt: skip
    return _save_hf(_randomise(Dinov2Model(config)), tmp_path_factory.mktemp("dinov2_hf"))
