"""Images: torchvision transforms v2 for decoding, augmentation and normalisation; a patch projection.

Following ViT (Dosovitskiy et al. 2021), an image of C × H × W is cut into non-overlapping p_h × p_w
patches, each projected linearly to a token. The projection is a Conv2d with kernel = stride = patch named
`proj`, as in timm's PatchEmbed, so ViT checkpoints map onto it key for key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import PIL.Image
import torch
from torch import nn
from torchvision.transforms import v2

from tabrasa.backbone.tokens import TokenGrid
from tabrasa.tokenizers.base import (
    Batch,
    Embedder,
    Tokenizer,
    Tokens,
    collate_labels,
    learned_token,
    with_label,
)
from tabrasa.tokenizers.permutation import check_seed, permute_cells
from tabrasa.tokenizers.specs import Grid, Spec, grid_size, register_embedder, register_tokenizer

ImageInput = torch.Tensor | np.ndarray | PIL.Image.Image
Size = tuple[int, int]


def as_pair(value: int | Sequence[int], name: str) -> Size:
    """An int or an (h, w) pair → (h, w), each >= 1."""
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or any(not isinstance(v, int) or v < 1 for v in pair):
        raise ValueError(f"{name}={value!r} must be a positive int or a pair (height, width) of them")
    return pair[0], pair[1]


def per_channel(value: float | Sequence[float], channels: int, name: str) -> list[float]:
    """One float for every channel, or exactly one per channel."""
    values = [float(value)] * channels if isinstance(value, int | float) else [float(v) for v in value]
    if len(values) != channels:
        raise ValueError(f"{name} has {len(values)} values but channels={channels}; give one per channel")
    return values


class ImageTokenizer(Tokenizer):
    """Image (torch (C, H, W) or (H, W), numpy (H, W, C) or (H, W), PIL) → `pixels` (C, H, W) float.

    Pixels: uint8 is scaled to [0, 1]; float is taken to be in [0, 1] already; then normalised per channel
    with `mean` and `std` (default 0.5 and 0.5, mapping [0, 1] to [-1, 1] for any channel count; pass the
    ImageNet statistics for ImageNet weights). numpy arrays are read as (H, W, C) like `np.asarray(pil)`.

    Size policy: with `image_size` every image is resized to it (bilinear, antialiased); without it an image
    whose height or width the patch size does not divide is an error naming both and the fix.

    Augmentation runs only in train mode (`train=True`, or `tokenizer.train()`), in this order:
    RandomResizedCrop to `image_size` with `resized_crop_scale` (ImageNet style; replaces the resize),
    RandomCrop with `crop_padding` pixels of zero padding (CIFAR style), RandomHorizontalFlip if `hflip`.
    `augment` replaces all three with any transform of a float (C, H, W) tensor.

    permute_elements_seed: the permutation test of Perceiver (Jaegle et al. 2021): after augmentation and
    normalisation, the H·W pixel positions move by one fixed permutation drawn from this seed, the same
    for every channel and every image, in training and evaluation alike, before the patches are cut
    (`tabrasa.tokenizers.permutation`). A patch then holds scattered pixels, so no backbone keeps its
    locality. One permutation per image size: set image_size when a dataset's images differ in size.
    """

    def __init__(
        self,
        patch_size: int | Sequence[int] = 16,
        channels: int = 3,
        image_size: int | Sequence[int] | None = None,
        mean: float | Sequence[float] = 0.5,
        std: float | Sequence[float] = 0.5,
        train: bool = False,
        crop_padding: int = 0,
        resized_crop_scale: Sequence[float] | None = None,
        hflip: bool = False,
        augment: Callable[[torch.Tensor], torch.Tensor] | None = None,
        cls_token: bool = True,
        permute_elements_seed: int | None = None,
    ) -> None:
        if channels < 1:
            raise ValueError(f"channels={channels} must be >= 1")
        self.patch_size = as_pair(patch_size, "patch_size")
        self.channels = channels
        self.image_size = None if image_size is None else as_pair(image_size, "image_size")
        if self.image_size is not None:
            self._check_divisible(self.image_size, "image_size")
        self.normalize = v2.Normalize(per_channel(mean, channels, "mean"), per_channel(std, channels, "std"))
        if any(s <= 0 for s in self.normalize.std):
            raise ValueError(f"std={std} must be positive in every channel")
        if resized_crop_scale is not None and self.image_size is None:
            raise ValueError("resized_crop_scale needs image_size: the size RandomResizedCrop outputs")
        if crop_padding < 0:
            raise ValueError(f"crop_padding={crop_padding} must be >= 0")
        self.training = train
        self.crop_padding = crop_padding
        self.resized_crop_scale = None if resized_crop_scale is None else tuple(resized_crop_scale)
        self.hflip = hflip
        self.augment = augment
        self.cls_token = cls_token
        self.permute_elements_seed = (
            None
            if permute_elements_seed is None
            else check_seed(permute_elements_seed, "ImageTokenizer permute_elements_seed")
        )

    def encode(self, raw: ImageInput | Mapping[str, Any]) -> Batch:
        """An image, or a mapping with `image` and an optional `label` → `pixels`; augmented in train mode."""
        image = raw["image"] if isinstance(raw, Mapping) else raw
        return with_label({"pixels": self.preprocess(image, self.training)}, raw)

    def encode_batch(self, raws: Sequence[ImageInput | Mapping[str, Any]]) -> Batch:
        """uint8 tensors of one size (a (B, C, H, W) tensor or a list of (C, H, W)) go through
        `preprocess_batch`, a few tensor operations for the whole batch; anything else image by image."""
        if isinstance(raws, torch.Tensor) and raws.dtype == torch.uint8 and raws.ndim == 4:
            return {"pixels": self.preprocess_batch(raws, self.training)}
        return super().encode_batch(raws)

    def preprocess(self, image: ImageInput, train: bool = False, source: str = "image") -> torch.Tensor:
        img = self._to_float_image(image, source)  # (C, H, W) in [0, 1]
        resized_crop = train and self.augment is None and self.resized_crop_scale is not None
        if self.image_size is not None and not resized_crop and tuple(img.shape[-2:]) != self.image_size:
            img = v2.functional.resize(img, list(self.image_size), antialias=True)
        if train:
            img = self._augment(img)
        self._check_divisible(tuple(img.shape[-2:]), source)
        return self._permuted(self.normalize(img).as_subclass(torch.Tensor))

    def preprocess_batch(self, images: torch.Tensor, train: bool = False) -> torch.Tensor:
        """uint8 images (B, C, H, W) of one size → normalised float (B, C, H, W), as `preprocess` does each
        image, but in a few batched tensor operations: for small images (Fashion-MNIST's 28×28) the per-image
        transform call costs more than the training step spends on the image.

        Padded random crops and flips draw their own offsets and coin per image (v2's RandomCrop and
        RandomHorizontalFlip draw one for the whole batch when given a batch, so they are not used here).
        RandomResizedCrop and a custom `augment` have no batched form and run image by image.
        """
        if images.dtype != torch.uint8 or images.ndim != 4 or images.shape[1] != self.channels:
            raise ValueError(
                f"images must be uint8 (B, {self.channels}, H, W); got {images.dtype} {tuple(images.shape)}"
            )
        img = v2.functional.to_dtype(images, torch.float32, scale=True)
        per_image = train and (self.augment is not None or self.resized_crop_scale is not None)
        if per_image:
            return torch.stack([self.preprocess(image, train=True, source="image") for image in img])
        if self.image_size is not None and tuple(img.shape[-2:]) != self.image_size:
            img = v2.functional.resize(img, list(self.image_size), antialias=True)
        if train and self.crop_padding:
            img = _random_crops(img, self.crop_padding)
        if train and self.hflip:
            flip = torch.rand(len(img)) < 0.5
            img = torch.where(flip[:, None, None, None], img.flip(-1), img)
        self._check_divisible(tuple(img.shape[-2:]), "images")
        return self._permuted(self.normalize(img).as_subclass(torch.Tensor))

    def _permuted(self, pixels: torch.Tensor) -> torch.Tensor:
        """Normalised pixels (..., H, W), moved by the fixed permutation when permute_elements_seed is set."""
        seed = self.permute_elements_seed
        return pixels if seed is None else permute_cells(pixels, seed)

    def _to_float_image(self, image: ImageInput, source: str) -> torch.Tensor:
        if isinstance(image, torch.Tensor) and image.ndim == 2:
            image = image[None]  # (H, W) → (1, H, W)
        if not isinstance(image, torch.Tensor | np.ndarray | PIL.Image.Image):
            raise TypeError(
                f"{source} is {type(image).__name__}; pass a torch tensor, numpy array or PIL image"
            )
        if isinstance(image, torch.Tensor | np.ndarray) and image.ndim not in (2, 3):
            raise ValueError(f"{source} has shape {tuple(image.shape)}; expected (C, H, W) or (H, W)")
        img = v2.functional.to_image(image)  # (C, H, W); numpy (H, W, C) and PIL are transposed
        if img.ndim == 3 and 0 in img.shape[-2:]:
            raise ValueError(
                f"{source} is empty ({img.shape[-2]}x{img.shape[-1]} pixels); drop it from the dataset"
            )
        if img.ndim != 3:
            raise ValueError(f"{source} has shape {tuple(img.shape)}; expected (C, H, W) or (H, W)")
        if img.shape[0] != self.channels:
            layout = "; numpy arrays are read as (H, W, C), for (C, H, W) pass torch.from_numpy(array)"
            raise ValueError(
                f"{source} has {img.shape[0]} channels (shape {tuple(img.shape)}) but the tokenizer was "
                f"built with channels={self.channels}; convert the image (e.g. PIL .convert('RGB') or 'L') "
                f"or build ImageTokenizer(channels={img.shape[0]})"
                + (layout if isinstance(image, np.ndarray) else "")
            )
        if img.dtype == torch.uint8:
            return v2.functional.to_dtype(img, torch.float32, scale=True)
        if not img.is_floating_point():
            raise TypeError(f"{source} has dtype {img.dtype}; pass uint8 (0-255) or float in [0, 1]")
        if not bool(torch.isfinite(img).all()):
            raise ValueError(f"{source} holds NaN or infinite pixels; clean or drop it")
        return img.float()

    def _augment(self, img: torch.Tensor) -> torch.Tensor:
        if self.augment is not None:
            return self.augment(img)
        if self.resized_crop_scale is not None:
            assert self.image_size is not None
            img = v2.RandomResizedCrop(self.image_size, scale=self.resized_crop_scale, antialias=True)(img)
        if self.crop_padding:
            img = v2.RandomCrop(list(img.shape[-2:]), padding=self.crop_padding)(img)
        if self.hflip:
            img = v2.RandomHorizontalFlip()(img)
        return img

    def _check_divisible(self, size: tuple[int, ...], source: str) -> None:
        (h, w), (ph, pw) = size, self.patch_size
        if h % ph or w % pw:
            fit = (max(ph, round(h / ph) * ph), max(pw, round(w / pw) * pw))
            raise ValueError(
                f"{source} is {h}x{w} pixels, which patch size {ph}x{pw} does not divide; pass "
                f"image_size={fit} to resize every image, or choose a patch size that divides {h}x{w}"
            )

    def collate(self, examples: Sequence[Batch]) -> Batch:
        if not examples:
            raise ValueError("cannot collate an empty list of examples")
        sizes = sorted({tuple(e["pixels"].shape[-2:]) for e in examples})
        if len(sizes) > 1:
            raise ValueError(
                f"images in one batch must have one size but have {sizes}; pass image_size=... to the "
                f"ImageTokenizer so every image is resized to it"
            )
        return collate_labels(examples, {"pixels": torch.stack([e["pixels"] for e in examples])})

    def grid(self, image_size: Size) -> TokenGrid:
        """The patch grid an image of `image_size` becomes."""
        return TokenGrid(image_size[0] // self.patch_size[0], image_size[1] // self.patch_size[1])

    def embedder(self, dim: int) -> ImageEmbedder:
        return ImageEmbedder(self.channels, self.patch_size, dim, cls_token=self.cls_token)

    def to_spec(self) -> ImageTokenizerSpec:
        """The preprocessing a checkpoint needs (augmentation is a training choice, not part of it)."""
        if self.image_size is None:
            raise ValueError("an ImageTokenizer without image_size has no fixed grid to store; set it")
        mean, std = tuple(self.normalize.mean), tuple(self.normalize.std)
        return ImageTokenizerSpec(
            self.patch_size, self.channels, self.image_size, mean, std, self.cls_token,
            self.permute_elements_seed,
        )  # fmt: skip

    @classmethod
    def from_spec(cls, spec: ImageTokenizerSpec, folder: Path | None = None) -> ImageTokenizer:
        size = spec.image_size
        return cls(
            spec.patch_size, spec.channels, size, spec.mean, spec.std, cls_token=spec.cls_token,
            permute_elements_seed=spec.permute_elements_seed,
        )  # fmt: skip


@dataclass(frozen=True)
class ImageTokenizerSpec(Spec):
    kind = "image"
    patch_size: Size
    channels: int
    image_size: Size
    mean: float | tuple[float, ...]
    std: float | tuple[float, ...]
    cls_token: bool = True
    permute_elements_seed: int | None = None  # the fixed pixel permutation the model was trained with

    def fitted(self, max_len: int, grid: Grid | None) -> ImageTokenizerSpec:
        return self if grid is None else replace(self, image_size=grid_size(grid, self.patch_size))


@dataclass(frozen=True)
class ImageEmbedderSpec(Spec):
    kind = "image"
    channels: int
    patch_size: Size
    cls_token: bool = True


def _random_crops(images: torch.Tensor, padding: int) -> torch.Tensor:
    """A crop of each image's original size at its own random offset in the zero-padded image, which is
    RandomCrop(size, padding) drawn independently per image. (B, C, H, W) → (B, C, H, W)."""
    B, _, H, W = images.shape
    padded = v2.functional.pad(images, [padding])  # (B, C, H + 2p, W + 2p)
    top = torch.randint(0, 2 * padding + 1, (B, 1))
    left = torch.randint(0, 2 * padding + 1, (B, 1))
    rows = (top + torch.arange(H))[:, None, :, None]  # (B, 1, H, 1)
    cols = (left + torch.arange(W))[:, None, None, :]  # (B, 1, 1, W)
    batch = torch.arange(B)[:, None, None, None]
    channels = torch.arange(images.shape[1])[None, :, None, None]
    return padded[batch, channels, rows, cols]


class ImageEmbedder(Embedder):
    """pixels (B, C, H, W) → [CLS] + one token per patch, (B, 1 + H/p_h · W/p_w, D), row-major grid."""

    def __init__(
        self, channels: int, patch_size: int | Sequence[int], dim: int, cls_token: bool = True
    ) -> None:
        super().__init__()
        self.dim = dim
        self.channels = channels
        self.patch_size = as_pair(patch_size, "patch_size")
        self.proj = nn.Conv2d(channels, dim, kernel_size=self.patch_size, stride=self.patch_size)
        self.cls_token = learned_token(dim) if cls_token else None

    def to_spec(self) -> ImageEmbedderSpec:
        return ImageEmbedderSpec(self.channels, self.patch_size, self.cls_token is not None)

    @classmethod
    def from_spec(cls, spec: ImageEmbedderSpec, dim: int) -> ImageEmbedder:
        return cls(spec.channels, spec.patch_size, dim, cls_token=spec.cls_token)

    def no_weight_decay(self) -> set[str]:
        """The class token is an embedding, not a map: weight decay would only shrink it (timm's hook)."""
        return {"cls_token"} if self.cls_token is not None else set()

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Tokens:
        pixels = batch["pixels"]
        B, C, H, W = pixels.shape
        ph, pw = self.patch_size
        if self.channels != C or H % ph or W % pw:
            raise ValueError(
                f"pixels have shape {tuple(pixels.shape)} but the embedder takes {self.channels} channels "
                f"and sides divisible by {ph}x{pw}; the tokenizer and the embedder do not match"
            )
        x = self.proj(pixels)  # (B, D, H/ph, W/pw)
        grid = TokenGrid(x.shape[2], x.shape[3], prefix=int(self.cls_token is not None))
        x = x.flatten(2).transpose(1, 2)  # (B, N, D), row-major over the patch grid
        if self.cls_token is not None:
            x = torch.cat([self.cls_token.expand(B, -1, -1), x], dim=1)  # (B, 1 + N, D)
        mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
        return Tokens(x, mask, grid)


register_tokenizer(ImageTokenizer, ImageTokenizerSpec)
register_embedder(ImageEmbedder, ImageEmbedderSpec)
