"""Image classification data: Arrow rows (`image`, `label`) → the image tokenizer, augmented in training only.

Subclasses provide the splits; `image` may be a file path (user folders), a PIL image (the `datasets.Image`
feature decodes to one) or a numpy array. PIL images are converted to the tokenizer's channel count.
"""

from __future__ import annotations

from typing import Any

import PIL.Image
from torch.utils.data import Dataset

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.image_tensors import TensorRows, decode_images
from tabrasa.data.splits import Size
from tabrasa.data.torch_dataset import EncodedDataset
from tabrasa.tokenizers.base import Batch, in_mode
from tabrasa.tokenizers.image import ImageTokenizer

MODES = {1: "L", 3: "RGB"}


class ImageClassificationDataModule(TabrasaDataModule):
    """tokenizer: patch size, resizing, normalisation and the training augmentation; required, a data
    module never picks one. val_size: rows (or a fraction) held out from train, stratified.
    in_memory: decode every image once into a uint8 tensor and tokenise whole batches (small images of
    one size, e.g. Fashion-MNIST: several times the throughput); False decodes a batch's files in workers."""

    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.ImageTokenizer, "
        "init_args: {patch_size: 16, channels: 3, image_size: 224}}"
    )

    def __init__(
        self,
        tokenizer: ImageTokenizer | None = None,
        val_size: Size = 0.1,
        in_memory: bool = False,
        **kwargs: Any,
    ) -> None:
        # The modality's tokenizer type: `--data` files that switch modality then drop the other's settings.
        super().__init__(tokenizer=tokenizer, **kwargs)
        self.val_size = val_size
        self.in_memory = in_memory
        self._decoded: dict[str, TensorRows] = {}

    def raw_input(self, row: dict[str, Any], split: str) -> Any:
        image = row["image"]
        if isinstance(image, str):
            image = PIL.Image.open(image)
        if isinstance(image, PIL.Image.Image):  # palette, CMYK, RGBA … → what the tokenizer was built for
            channels = getattr(self.tokenizer, "channels", None)
            image = image.convert(MODES.get(channels, image.mode))  # type: ignore[arg-type]
        return image

    def dataset(self, split: str) -> Dataset[Batch]:
        if not self.in_memory:
            return super().dataset(split)
        if split not in self._decoded:
            images, labels = decode_images(self.splits[split], f"{type(self).__name__} {split}")
            self._decoded[split] = TensorRows(images, labels)
        rows = self._decoded[split]
        return EncodedDataset(rows, len(rows), in_mode(self.tokenizer, training=split == "train"))
