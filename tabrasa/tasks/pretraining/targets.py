"""What a masked patch or frame should be reconstructed as: its own pixels or log-mel values.

Kept here, keyed by embedder type, instead of on the embedders: the built-in image and audio embedders get
their targets from this one file, and any other embedder (a user's, or a future modality) opts in by
defining `reconstruction_target(batch) -> (B, P, F)` and `reconstruction_dim` (= F), looked for first.
P counts the tokens after the grid's prefix (CLS), in the embedder's own row-major order.

Targets are normalised per patch (MAE's `norm_pix_loss`, He et al. 2022; Audio-MAE, Huang et al. 2022,
uses the same for log-mel patches): the model predicts each patch's shape, not its brightness or loudness,
which He et al. found to give better representations.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from tabrasa.errors import UserError
from tabrasa.tokenizers.audio import AudioEmbedder
from tabrasa.tokenizers.base import Embedder
from tabrasa.tokenizers.image import ImageEmbedder

HOOK = "reconstruction_target"


def has_hook(embedder: Embedder) -> bool:
    size = getattr(embedder, "reconstruction_dim", None)
    return callable(getattr(embedder, HOOK, None)) and isinstance(size, int)


def supports_reconstruction(embedder: Embedder) -> bool:
    return has_hook(embedder) or isinstance(embedder, ImageEmbedder | AudioEmbedder)


def require_reconstruction(embedder: Embedder) -> None:
    if not supports_reconstruction(embedder):
        raise UserError(
            f"masked patch modelling needs a reconstruction target, and {type(embedder).__name__} has none; "
            f"use an ImageTokenizer or AudioTokenizer (patches or frames), MaskedTokenModel for text and "
            f"protein tokens, or give the embedder a `{HOOK}(batch) -> (B, P, F)` method and an int "
            f"`reconstruction_dim`"
        )


def reconstruction_target(embedder: Embedder, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """(B, P, F) raw target values, one row per patch or frame token."""
    if has_hook(embedder):
        return getattr(embedder, HOOK)(batch)
    if isinstance(embedder, ImageEmbedder):
        return image_patches(batch["pixels"], embedder.patch_size)
    if isinstance(embedder, AudioEmbedder):
        features = batch["features"]  # (B, T, F)
        if embedder.patch_size is None:
            return features  # one frame a token
        return image_patches(features[:, None], embedder.patch_size)
    require_reconstruction(embedder)
    raise AssertionError("unreachable")


def target_size(embedder: Embedder) -> int:
    """F: values per patch or frame token."""
    if has_hook(embedder):
        return int(embedder.reconstruction_dim)  # type: ignore[attr-defined]
    if isinstance(embedder, ImageEmbedder):
        return embedder.channels * embedder.patch_size[0] * embedder.patch_size[1]
    if isinstance(embedder, AudioEmbedder):
        if embedder.patch_size is None:
            return embedder.n_mels
        return embedder.patch_size[0] * embedder.patch_size[1]
    require_reconstruction(embedder)
    raise AssertionError("unreachable")


def image_patches(pixels: torch.Tensor, patch: tuple[int, int]) -> torch.Tensor:
    """(B, C, H, W) → (B, H/ph · W/pw, ph · pw · C), patches row-major as the Conv2d projection's."""
    B, C, H, W = pixels.shape
    ph, pw = patch
    x = pixels.reshape(B, C, H // ph, ph, W // pw, pw)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(B, (H // ph) * (W // pw), ph * pw * C)


def normalise_per_patch(target: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Each patch to zero mean and unit variance over its own values (MAE's norm_pix_loss)."""
    mean = target.mean(-1, keepdim=True)
    var = target.var(-1, keepdim=True, unbiased=True) if target.shape[-1] > 1 else torch.zeros_like(mean)
    return (target - mean) / (var + eps).sqrt()
