"""The Audio Spectrogram Transformer's input side (Gong et al. 2021), as its Hugging Face checkpoints expect.

AST differs from tabrasa's AudioEmbedder in three ways its weights depend on, so it has its own embedder:
overlapping 16×16 patches (stride 10 in both axes), a grid whose rows run along frequency, and two prefix
tokens (CLS and DeiT's distillation token). Its features are Kaldi fbanks of a fixed number of frames
(zero-padded or cut), normalised as (x - mean) / (2·std), exactly as transformers' ASTFeatureExtractor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
import torchaudio.compliance.kaldi as kaldi
import torchaudio.functional
from torch import nn

from tabrasa.backbone.tokens import TokenGrid
from tabrasa.tokenizers.audio_features import WaveformInput, as_mono
from tabrasa.tokenizers.base import Batch, Embedder, Tokenizer, Tokens, collate_labels, learned_token
from tabrasa.tokenizers.specs import Grid, Spec, grid_size, register_embedder, register_tokenizer
from tabrasa.tokenizers.truncation import TruncationPolicy, truncate
from tabrasa.tokenizers.waveform import encode_example

AST_MEAN, AST_STD = -4.2677393, 4.5689974  # AudioSet fbank statistics from the AST release


def ast_grid(n_mels: int, frames: int, patch: tuple[int, int], stride: tuple[int, int]) -> tuple[int, int]:
    """(frequency rows, time columns) of overlapping patches, as AST's `get_shape`."""
    return (n_mels - patch[0]) // stride[0] + 1, (frames - patch[1]) // stride[1] + 1


class ASTEmbedder(Embedder):
    """features (B, frames, n_mels) → [CLS, DIST] + patch tokens (B, 2 + rows·cols, D).

    `proj` is a Conv2d over the (1, n_mels, frames) spectrogram image; rows run along frequency.
    """

    def __init__(
        self, dim: int, n_mels: int, frames: int, patch: tuple[int, int], stride: tuple[int, int]
    ) -> None:
        super().__init__()
        self.dim, self.n_mels, self.frames = dim, n_mels, frames
        self.proj = nn.Conv2d(1, dim, kernel_size=patch, stride=stride)
        self.cls_token = learned_token(dim)
        self.dist_token = learned_token(dim)
        self.grid = ast_grid(n_mels, frames, patch, stride)

    def no_weight_decay(self) -> set[str]:
        """Class and distillation tokens are embeddings, not maps: no weight decay (timm's hook)."""
        return {"cls_token", "dist_token"}

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        features = batch["features"]
        B, T, F = features.shape
        if (self.frames, self.n_mels) != (T, F):
            raise ValueError(
                f"features have shape {tuple(features.shape)} but AST takes exactly ({self.frames} frames, "
                f"{self.n_mels} mel bins): its position table covers a fixed grid. Use ASTTokenizer, which "
                f"pads and cuts to that length, or resample the positions (resample_positions=True)"
            )
        x = self.proj(features.transpose(1, 2)[:, None])  # (B, D, rows, cols)
        x = x.flatten(2).transpose(1, 2)  # (B, rows·cols, D), frequency-major
        prefix = torch.cat([self.cls_token, self.dist_token], dim=1).expand(B, -1, -1)  # (B, 2, D)
        x = torch.cat([prefix, x], dim=1)
        mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
        return Tokens(x, mask, TokenGrid(*self.grid, prefix=2))

    def to_spec(self) -> ASTEmbedderSpec:
        patch, stride = self.proj.kernel_size, self.proj.stride
        return ASTEmbedderSpec(self.n_mels, self.frames, (patch[0], patch[1]), (stride[0], stride[1]))

    @classmethod
    def from_spec(cls, spec: ASTEmbedderSpec, dim: int) -> ASTEmbedder:
        return cls(dim, spec.n_mels, spec.frames, spec.patch_size, spec.stride)


@dataclass(frozen=True)
class ASTEmbedderSpec(Spec):
    kind = "ast"
    n_mels: int
    frames: int
    patch_size: Grid
    stride: Grid

    def fitted(self, max_len: int, grid: Grid | None) -> ASTEmbedderSpec:
        if grid is None:
            return self
        n_mels, frames = grid_size(grid, self.patch_size, self.stride)
        return replace(self, n_mels=n_mels, frames=frames)


class ASTTokenizer(Tokenizer):
    """Waveform → `features` (frames, n_mels): Kaldi fbank (Hanning window, 25 ms / 10 ms), zero-padded or
    cut to `frames` (cutting follows `truncation` and is counted in `truncated`), normalised.
    patch_size, stride: the (frequency, time) patches the matching embedder cuts."""

    def __init__(
        self,
        n_mels: int = 128,
        frames: int = 1024,
        mean: float = AST_MEAN,
        std: float = AST_STD,
        sample_rate: int = 16000,
        truncation: TruncationPolicy = "head",
        patch_size: tuple[int, int] = (16, 16),
        stride: tuple[int, int] = (10, 10),
    ) -> None:
        self.n_mels, self.frames, self.mean, self.std = n_mels, frames, mean, std
        self.sample_rate, self.truncation = sample_rate, truncation
        self.patch_size, self.stride = tuple(patch_size), tuple(stride)

    def encode(self, wave: WaveformInput, sample_rate: int, source: str = "audio") -> Batch:
        mono = as_mono(wave, source)
        if sample_rate != self.sample_rate:
            mono = torchaudio.functional.resample(mono, sample_rate, self.sample_rate)
        fbank = kaldi.fbank(
            mono[None], sample_frequency=self.sample_rate, window_type="hanning", num_mel_bins=self.n_mels
        )  # (frames, n_mels)
        kept, removed = truncate(list(range(len(fbank))), self.frames, self.truncation, 0, 0, source)
        fbank = nn.functional.pad(fbank[kept], (0, 0, 0, self.frames - len(kept)))
        return {"features": (fbank - self.mean) / (2 * self.std), "truncated": torch.tensor(removed)}

    def __call__(self, example: WaveformInput | Mapping[str, Any]) -> Batch:
        """A 16 kHz waveform, or a mapping with `audio` (or a datasets Audio dict), its rate and `label`."""
        return encode_example(self.encode, example, self.sample_rate)

    def collate(self, examples: Sequence[Batch]) -> Batch:
        if not examples:
            raise ValueError("cannot collate an empty list of examples")
        features = torch.stack([e["features"] for e in examples])  # all `frames` long
        mask = torch.ones(features.shape[:2], dtype=torch.bool)
        return collate_labels(examples, {"features": features, "frame_mask": mask})

    def embedder(self, dim: int) -> ASTEmbedder:
        return ASTEmbedder(dim, self.n_mels, self.frames, self.patch_size, self.stride)

    def to_spec(self) -> ASTTokenizerSpec:
        return ASTTokenizerSpec(
            self.n_mels, self.frames, self.patch_size, self.stride, self.mean, self.std, self.sample_rate
        )

    @classmethod
    def from_spec(cls, spec: ASTTokenizerSpec, folder: Path | None = None) -> ASTTokenizer:
        return cls(
            spec.n_mels, spec.frames, spec.mean, spec.std, spec.sample_rate,
            patch_size=spec.patch_size, stride=spec.stride,
        )  # fmt: skip


@dataclass(frozen=True)
class ASTTokenizerSpec(ASTEmbedderSpec):
    """The embedder's shape plus the fbank normalisation and sample rate of the features it reads."""

    kind = "ast"
    mean: float = AST_MEAN
    std: float = AST_STD
    sample_rate: int = 16000


register_tokenizer(ASTTokenizer, ASTTokenizerSpec)
register_embedder(ASTEmbedder, ASTEmbedderSpec)
