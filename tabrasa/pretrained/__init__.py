"""Pretrained backbone import and export: BERT, RoBERTa, GPT-2, ViT (Hugging Face and timm), DeiT, DINOv2,
ESM-2, AST and Whisper checkpoints loaded strictly into the shared backbone and the matching embedder."""

from tabrasa.pretrained.api import Pretrained, check_checkpoint, load_into, load_pretrained
from tabrasa.pretrained.config import PretrainedConfig, PretrainedSource
from tabrasa.pretrained.engine import CheckpointMismatchError, KeyMap, To
from tabrasa.pretrained.export import export_pretrained, export_state
from tabrasa.pretrained.families import FAMILIES, get_family
from tabrasa.pretrained.tabrasa_format import save_tabrasa
from tabrasa.pretrained.tokenizer import PretrainedTokenizer

__all__ = [
    "FAMILIES",
    "CheckpointMismatchError",
    "KeyMap",
    "Pretrained",
    "PretrainedConfig",
    "PretrainedSource",
    "PretrainedTokenizer",
    "To",
    "check_checkpoint",
    "export_pretrained",
    "export_state",
    "get_family",
    "load_into",
    "load_pretrained",
    "save_tabrasa",
]
