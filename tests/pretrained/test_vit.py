"""ViT in both layouts: Hugging Face ViTModel (`vit_hf`) and timm VisionTransformer (`vit_timm`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tabrasa.pretrained import CheckpointMismatchError, check_checkpoint, export_pretrained, load_pretrained
from tabrasa.tokenizers.image import ImageTokenizer
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, hf_file_state, run


def test_tiny_vit_hf_matches_transformers(tiny_vit_hf: Reference) -> None:
    model = load_pretrained("vit_hf", tiny_vit_hf.folder)
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = tiny_vit_hf.model(pixel_values=pixels).last_hidden_state
    assert_match("vit_hf (tiny random)", run(model, {"pixels": pixels}), expected)
    assert isinstance(model.tokenizer, ImageTokenizer) and model.tokenizer.image_size == (16, 16)


def test_tiny_vit_timm_matches_timm(tiny_vit_timm: Reference) -> None:
    model = load_pretrained("vit_timm", tiny_vit_timm.folder)
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = tiny_vit_timm.model.forward_features(pixels)
    assert_match("vit_timm (tiny random)", run(model, {"pixels": pixels}), expected)
    assert model.config.encoder.norm_eps == 1e-6


def test_vit_hf_base_key_map_on_meta() -> None:
    from transformers import ViTConfig, ViTModel

    config = ViTConfig()  # ViT-B/16 at 224
    pconf = check_checkpoint("vit_hf", hf_file_state(ViTModel, config), config.to_dict())
    assert (pconf.encoder.max_len, pconf.grid) == (197, (14, 14))


@pytest.mark.parametrize(
    ("architecture", "shape"),
    [("vit_base_patch16_224", (768, 12, 12, 0)), ("vit_small_patch14_reg4_dinov2", (384, 12, 6, 4))],
)
def test_vit_timm_full_size_key_map_on_meta(architecture: str, shape: tuple[int, int, int, int]) -> None:
    from tabrasa.pretrained.vit_timm import build_reference

    reference = build_reference({"architecture": architecture})
    pconf = check_checkpoint("vit_timm", reference.state_dict(), {"architecture": architecture})
    e = pconf.encoder
    assert (e.dim, e.depth, e.heads, e.register_tokens) == shape


def test_tiny_vit_timm_with_registers_matches_timm(tiny_vit_timm_reg: Reference, tmp_path: Path) -> None:
    """timm keeps [CLS] and the registers out of its position table (no_embed_class) and returns them
    in front of the patches; tabrasa drops the registers at the output."""
    model = load_pretrained("vit_timm", tiny_vit_timm_reg.folder)
    assert model.config.encoder.register_tokens == 4 and model.config.encoder.layer_scale_init is not None
    assert not bool(model.encoder.positions.weight[0].any())  # the class token's zero row
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        full = tiny_vit_timm_reg.model.forward_features(pixels)  # (B, 1 + 4 + 16, D)
    expected = torch.cat([full[:, :1], full[:, 5:]], dim=1)
    assert_match("vit_timm registers (tiny random)", run(model, {"pixels": pixels}), expected)

    out = export_pretrained(model.encoder, model.embedder, model.config, tmp_path / "export")
    state = load_file(str(out / "model.safetensors"))
    reference = tiny_vit_timm_reg.model.state_dict()
    assert set(state) == set(reference)
    for key, tensor in reference.items():
        assert torch.equal(state[key], tensor), key


def test_a_trained_class_position_row_is_not_exported_silently(
    tiny_vit_timm_reg: Reference, tmp_path: Path
) -> None:
    model = load_pretrained("vit_timm", tiny_vit_timm_reg.folder)
    with torch.no_grad():
        model.encoder.positions.weight[0] += 0.1  # as a fine-tune that trains the position table would
    with pytest.raises(CheckpointMismatchError, match="not zero"):
        export_pretrained(model.encoder, model.embedder, model.config, tmp_path / "export")


def test_registers_inside_the_position_table_are_refused() -> None:
    config = {"architecture": "vit_tiny_patch16_224", "model_args": {"reg_tokens": 2, "img_size": 32}}
    with pytest.raises(ValueError, match="register tokens with positions"):
        check_checkpoint("vit_timm", {}, config)


def test_timm_positions_resample_only_on_request(tiny_vit_timm: Reference) -> None:
    """16×16 → 24×24 pixels: a 4×4 patch grid becomes 6×6, as timm's own resampling makes it."""
    import timm
    from timm.layers import resample_abs_pos_embed

    with pytest.raises(ValueError, match="resample_positions: true"):
        load_pretrained("vit_timm", tiny_vit_timm.folder, grid=(6, 6))
    model = load_pretrained("vit_timm", tiny_vit_timm.folder, grid=(6, 6), resample_positions=True)
    assert model.tokenizer is not None and model.tokenizer.image_size == (24, 24)

    bigger = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, img_size=24, patch_size=4, embed_dim=32, depth=2,
        num_heads=4, num_classes=0,
    ).eval()  # fmt: skip
    state = tiny_vit_timm.model.state_dict()
    state["pos_embed"] = resample_abs_pos_embed(state["pos_embed"], [6, 6], [4, 4], num_prefix_tokens=1)
    bigger.load_state_dict(state)
    pixels = torch.randn(2, 3, 24, 24)
    with torch.no_grad():
        expected = bigger.forward_features(pixels)
    assert_match("vit_timm (resampled 4x4 -> 6x6)", run(model, {"pixels": pixels}), expected)
