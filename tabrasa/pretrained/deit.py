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
from tabrasa.pretrained.engine import KeyMap, To
from tabrasa.pretrained.families import Family, require
from tabrasa.tokenizers.deit import DeitEmbedderSpec
from tabrasa.tokenizers.image import ImageTokenizerSpec, as_pair
from tabrasa.tokenizers.specs import grid_size

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # DeiTImageProcessor's

KEY_MAP = KeyMap(
    rules={
        "embeddings.cls_token": "embedder.cls_token",
        "embeddings.distillation_token": "embedder.dist_token",
        "embeddings.position_embeddings": To("encoder.positions.weight", squeeze=1),
        "embeddings.patch_embeddings.projection.weight": "embedder.proj.weight",
        "embeddings.patch_embeddings.projection.bias": "embedder.proj.bias",
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
    image = as_pair(require(config, "image_size", name), "image_size")
    patch = as_pair(require(config, "patch_size", name), "patch_size")
    grid = (image[0] // patch[0], image[1] // patch[1])
    encoder = vit_hf.vit_encoder_config(config, name, max_len=2 + grid[0] * grid[1])
    channels = config.get("num_channels", 3)
    tokenizer = ImageTokenizerSpec(patch, channels, image, IMAGENET_MEAN, IMAGENET_STD)
    embedder = DeitEmbedderSpec(channels, patch)
    return PretrainedConfig(name, encoder, embedder, tokenizer, grid, prefix_tokens=2, source=config)


def export_config(config: PretrainedConfig) -> dict[str, Any]:
    embedder = config.embedder
    assert config.grid is not None and isinstance(embedder, DeitEmbedderSpec)
    size = grid_size(config.grid, embedder.patch_size)
    return {
        **vit_hf.vit_export_config(config),
        "architectures": ["DeiTModel"],
        "model_type": "deit",
        "image_size": size[0] if size[0] == size[1] else list(size),
        "patch_size": embedder.patch_size[0],
        "num_channels": embedder.channels,
    }


FAMILY = Family("deit", KEY_MAP, translate, export_config)
