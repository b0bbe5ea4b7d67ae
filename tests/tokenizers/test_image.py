"""Image tokenizer: input kinds and channel counts, the size policy, train-only augmentation, patch order."""

from __future__ import annotations

import pickle

import PIL.Image
import pytest
import timm.layers
import torch

from tabrasa.backbone.tokens import TokenGrid
from tabrasa.tokenizers.image import ImageEmbedder, ImageTokenizer

PIL_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def random_uint8(channels: int, h: int = 28, w: int = 28) -> torch.Tensor:
    return torch.randint(0, 256, (channels, h, w), dtype=torch.uint8)


@pytest.mark.parametrize("cls_token", [True, False])
def test_28x28_patch_7_gives_a_4x4_grid(cls_token: bool) -> None:
    tok = ImageTokenizer(patch_size=7, channels=1, cls_token=cls_token)
    batch = tok.collate([tok(random_uint8(1)) for _ in range(2)])
    out = tok.embedder(32)(batch)
    assert out.x.shape == (2, 16 + cls_token, 32)
    assert out.mask.dtype == torch.bool and bool(out.mask.all()) and out.mask.shape == (2, 16 + cls_token)
    assert out.grid == TokenGrid(4, 4, prefix=int(cls_token))


def test_rectangular_patches() -> None:
    tok = ImageTokenizer(patch_size=(7, 4), channels=1, cls_token=False)
    out = tok.embedder(32)(tok.collate([tok(random_uint8(1))]))
    assert out.grid == TokenGrid(4, 7) and out.x.shape == (1, 28, 32)


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_torch_numpy_and_pil_inputs_agree_for_every_channel_count(channels: int) -> None:
    tok = ImageTokenizer(patch_size=7, channels=channels)
    chw = random_uint8(channels)
    hwc = chw.permute(1, 2, 0).numpy()
    pil = PIL.Image.fromarray(hwc[..., 0] if channels == 1 else hwc, mode=PIL_MODES[channels])
    pixels = [tok(x)["pixels"] for x in (chw, hwc, pil)]
    assert pixels[0].shape == (channels, 28, 28) and pixels[0].dtype == torch.float32
    torch.testing.assert_close(pixels[1], pixels[0])
    torch.testing.assert_close(pixels[2], pixels[0])
    out = tok.embedder(32)(tok.collate([tok(chw)]))
    assert out.x.shape == (1, 17, 32)


def test_uint8_is_scaled_and_normalised_per_channel() -> None:
    tok = ImageTokenizer(patch_size=2, channels=2, mean=[0.0, 0.5], std=[1.0, 0.25])
    image = torch.stack([torch.full((2, 2), 255), torch.zeros(2, 2)]).to(torch.uint8)
    pixels = tok(image)["pixels"]
    assert pixels[0].eq(1.0).all() and pixels[1].eq(-2.0).all()
    floats = tok(image.float() / 255)["pixels"]  # float input is taken to be in [0, 1] already
    torch.testing.assert_close(floats, pixels)


def test_plain_2d_tensor_is_one_channel() -> None:
    pixels = ImageTokenizer(patch_size=7, channels=1)(random_uint8(1)[0])["pixels"]
    assert pixels.shape == (1, 28, 28)


def test_wrong_channel_count_names_it_and_the_fix() -> None:
    tok = ImageTokenizer(patch_size=7, channels=1)
    with pytest.raises(
        ValueError, match=r"has 3 channels .* channels=1; convert .* ImageTokenizer\(channels=3\)"
    ):
        tok(random_uint8(3))
    with pytest.raises(ValueError, match=r"numpy arrays are read as \(H, W, C\)"):
        tok(random_uint8(3).numpy())  # (C, H, W) numpy: read as 28 channels


def test_size_the_patch_does_not_divide_is_an_error_unless_resized() -> None:
    image = random_uint8(1, 30, 30)
    with pytest.raises(
        ValueError, match=r"30x30 pixels, which patch size 7x7 does not divide; pass image_size=\(28, 28\)"
    ):
        ImageTokenizer(patch_size=7, channels=1)(image)
    pixels = ImageTokenizer(patch_size=7, channels=1, image_size=28)(image)["pixels"]
    assert pixels.shape == (1, 28, 28)
    with pytest.raises(ValueError, match="image_size is 30x30"):
        ImageTokenizer(patch_size=7, channels=1, image_size=30)


def test_batch_of_unequal_sizes_names_them() -> None:
    tok = ImageTokenizer(patch_size=7, channels=1)
    with pytest.raises(ValueError, match=r"\[\(28, 28\), \(28, 35\)\]; pass image_size"):
        tok.collate([tok(random_uint8(1)), tok(random_uint8(1, 28, 35))])


def test_bad_pixels_are_errors() -> None:
    tok = ImageTokenizer(patch_size=7, channels=1)
    nan = torch.zeros(1, 28, 28)
    nan[0, 3, 3] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinite"):
        tok(nan)
    with pytest.raises(TypeError, match=r"dtype torch\.int32; pass uint8"):
        tok(torch.zeros(1, 28, 28, dtype=torch.int32))
    with pytest.raises(TypeError, match="is list"):
        tok([[0, 1]])
    with pytest.raises(ValueError, match="channels=2"):
        ImageTokenizer(patch_size=7, channels=2, mean=[0.5, 0.5, 0.5])


def test_augmentation_only_in_train_mode() -> None:
    image = torch.arange(28 * 28, dtype=torch.float32).view(1, 28, 28) / (28 * 28)
    tok = ImageTokenizer(patch_size=7, channels=1, crop_padding=4, hflip=True)
    plain = ImageTokenizer(patch_size=7, channels=1)(image)["pixels"]
    for _ in range(5):
        torch.testing.assert_close(tok(image)["pixels"], plain)
    trained = [tok.train()(image)["pixels"] for _ in range(5)]
    torch.testing.assert_close(tok.eval()(image)["pixels"], plain)
    assert all(t.shape == plain.shape for t in trained)
    assert not any(torch.equal(t, plain) for t in trained)
    flagged = ImageTokenizer(patch_size=7, channels=1, hflip=True, train=True)
    flips = {torch.equal(flagged(image)["pixels"], plain.flip(-1)) for _ in range(20)}
    assert flips == {True, False}  # flipped sometimes, never anything else


def test_random_resized_crop_outputs_image_size() -> None:
    tok = ImageTokenizer(patch_size=4, channels=3, image_size=16, resized_crop_scale=(0.3, 1.0))
    assert tok.train()(random_uint8(3, 40, 30))["pixels"].shape == (3, 16, 16)
    with pytest.raises(ValueError, match="resized_crop_scale needs image_size"):
        ImageTokenizer(patch_size=4, resized_crop_scale=(0.3, 1.0))


def test_tokens_are_patches_in_row_major_order() -> None:
    emb = ImageEmbedder(channels=1, patch_size=7, dim=8, cls_token=True)
    torch.nn.init.zeros_(emb.proj.bias)
    pixels = torch.zeros(1, 1, 28, 28)
    pixels[0, 0, 7:14, 14:21] = 1.0  # patch row 1, column 2
    out = emb({"pixels": pixels})
    active = out.x[0].abs().sum(-1).nonzero().flatten().tolist()
    assert active == [0, 1 + 1 * 4 + 2]  # CLS, then the patch at row 1, column 2


def test_projection_loads_timm_patch_embed_weights() -> None:
    reference = timm.layers.PatchEmbed(img_size=28, patch_size=7, in_chans=3, embed_dim=32)
    emb = ImageEmbedder(channels=3, patch_size=7, dim=32, cls_token=False)
    emb.proj.load_state_dict(reference.proj.state_dict())
    pixels = torch.randn(2, 3, 28, 28)
    torch.testing.assert_close(emb({"pixels": pixels}).x, reference(pixels))


def test_mapping_example_carries_its_label() -> None:
    tok = ImageTokenizer(patch_size=7, channels=1)
    batch = tok.collate([tok({"image": random_uint8(1), "label": k}) for k in (3, 5)])
    assert batch["label"].tolist() == [3, 5] and batch["pixels"].shape == (2, 1, 28, 28)


def test_tokenizer_pickles_for_loader_workers() -> None:
    tok = ImageTokenizer(patch_size=7, channels=1, crop_padding=2, hflip=True)
    image = random_uint8(1)
    torch.testing.assert_close(pickle.loads(pickle.dumps(tok))(image)["pixels"], tok(image)["pixels"])


def test_batched_preprocessing_matches_per_image_and_keeps_crop_statistics() -> None:
    tokenizer = ImageTokenizer(patch_size=7, channels=1, mean=0.3, std=0.4, crop_padding=2, hflip=True)
    images = torch.randint(0, 256, (6, 1, 28, 28), dtype=torch.uint8)
    batched = tokenizer.encode_batch(images)  # a uint8 (B, C, H, W) tensor takes the batched path
    one_by_one = tokenizer.collate([tokenizer.encode(image) for image in images])
    assert batched.keys() == one_by_one.keys()
    torch.testing.assert_close(batched["pixels"], one_by_one["pixels"], rtol=0, atol=0)
    ones = torch.full((200, 1, 28, 28), 255, dtype=torch.uint8)
    torch.manual_seed(0)
    augmented = tokenizer.preprocess_batch(ones, train=True)
    padded_rows = (augmented == tokenizer.normalize.mean[0] * -1 / tokenizer.normalize.std[0]).all(-1)
    shifts = padded_rows.sum((1, 2))  # zero rows brought in by each image's vertical offset
    assert set(shifts.tolist()) == {0, 1, 2}, "offsets drawn per image over the whole padding range"
    with pytest.raises(ValueError, match="uint8"):
        tokenizer.preprocess_batch(images.float())
