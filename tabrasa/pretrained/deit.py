"""DeiT (Touvron et al. 2021) in the Hugging Face DeiTModel file layout (family `deit`).

ViT's blocks and names (`vit_hf.LAYER_RULES`) behind a [CLS] and a distillation token, with one position
table over both and the patches (`DeitEmbedder`). timm's distilled DeiTs (`deit_*_distilled_patch16_224`,
VisionTransformerDistilled) load through family `vit_timm` into the same embedder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tabrasa.pretrained import vit_hf
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import KeyMap
from tabrasa.pretrained.families import Family
from tabrasa.tokenizers.deit import DeitEmbedderSpec
from tabrasa.tokenizers.image import ImageTokenizerSpec

KEY_MAP = KeyMap(
    rules={
        **vit_hf.EMBEDDING_RULES,
        "embeddings.distillation_token": "embedder.dist_token",
        **vit_hf.LAYER_RULES,
    },
    ignore={
        "embeddings.mask_token": "the masked-image-modelling token (DeiTForMaskedImageModeling)",
        "pooler.*": "the tanh pooler is a task head",
        "cls_classifier.*": "the classification heads are task heads",
        "distillation_classifier.*": "the classification heads are task heads",
        "classifier.*": "the classification head is a task head",
    },
)


def translate(config: dict[str, Any], folder: Path) -> PretrainedConfig:
    name = "deit"
    image, patch, grid = vit_hf.image_grid(config, name)
    encoder = vit_hf.vit_encoder_config(config, name, max_len=2 + grid[0] * grid[1])
    channels = config.get("num_channels", 3)
    tokenizer = ImageTokenizerSpec(
        patch, channels, image, vit_hf.IMAGENET_MEAN, vit_hf.IMAGENET_STD
    )  # DeiTImageProcessor's
    embedder = DeitEmbedderSpec(channels, patch)
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=2, source=config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    return {**vit_hf.vit_export_config(config, "DeiTModel", "deit"), **vit_hf.image_fields(config)}


FAMILY = Family("deit", KEY_MAP, translate, export_config)
