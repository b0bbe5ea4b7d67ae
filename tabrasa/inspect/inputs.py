"""One raw input for `tabrasa inspect`, read for the model's modality: an image file, an audio file, a text
(given literally or as a file) or a protein (a sequence or a FASTA file). A mistake is one UserError that
names the input and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import PIL.Image
import torch

from tabrasa.errors import UserError
from tabrasa.inspect.source import Modality

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff"})
AUDIO_SUFFIXES = frozenset({".wav", ".flac", ".ogg", ".mp3"})
FASTA_SUFFIXES = frozenset({".fasta", ".fa", ".faa", ".fas"})
EXPECTED = {
    "image": "the path of an image file (.png, .jpg, …)",
    "audio": "the path of an audio file (.wav, .flac, .ogg, .mp3)",
    "text": "a text, or the path of a text file",
    "protein": "an amino-acid sequence, or the path of a FASTA file",
}


def read_input(value: str, modality: Modality, channels: int = 3) -> Any:
    """The raw example `value` names, in the form the modality's tokenizer takes."""
    if not value.strip():
        raise UserError(f"input {value!r} is empty; pass {EXPECTED[modality]}")
    path = Path(value)
    is_file = _is_file(path)
    if is_file and path.stat().st_size == 0:
        raise UserError(f"input file {path} is empty; pass {EXPECTED[modality]}")
    if _is_dir(path):
        raise UserError(f"input {path} is a folder; this model reads {modality}: pass {EXPECTED[modality]}")
    kind = _kind_of(path) if is_file else None
    if modality in ("image", "audio"):
        if not is_file:
            raise UserError(
                f"input {value[:60]!r} is not a file; this model reads {modality}: pass {EXPECTED[modality]}"
            )
        if kind != modality:
            raise UserError(_wrong(path, kind, modality))
        return _read_image(path, channels) if modality == "image" else _read_audio(path)
    if kind in ("image", "audio"):
        raise UserError(_wrong(path, kind, modality))
    if not is_file:
        text = value
    elif modality == "protein" and path.suffix.lower() in FASTA_SUFFIXES:
        text = _first_fasta_sequence(path)
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
    if not text.strip():
        shown = f"file {path}" if is_file else repr(value)
        raise UserError(f"input {shown} is empty; pass {EXPECTED[modality]}")
    return text.strip()


def _kind_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix in AUDIO_SUFFIXES:
        return "audio"
    return None


def _wrong(path: Path, kind: str | None, modality: Modality) -> str:
    what = f"an {kind} file" if kind else f"a {path.suffix or 'suffix-less'} file"
    return f"input {path} is {what}, but this model reads {modality}; pass {EXPECTED[modality]}"


def _read_image(path: Path, channels: int) -> torch.Tensor:
    """(C, H, W) uint8, converted to the model's channel count (1 = grey, 3 = RGB)."""
    try:
        with PIL.Image.open(path) as image:
            image = image.convert("L" if channels == 1 else "RGB")
            pixels = np.asarray(image)
    except (OSError, PIL.UnidentifiedImageError) as error:
        raise UserError(f"input {path} cannot be read as an image ({error}); pass a valid one") from error
    pixels = pixels[..., None] if pixels.ndim == 2 else pixels
    return torch.from_numpy(pixels.copy()).permute(2, 0, 1)


def _read_audio(path: Path) -> dict[str, Any]:
    import soundfile

    try:
        wave, rate = soundfile.read(str(path), dtype="float32", always_2d=True)  # (T, C)
    except (RuntimeError, soundfile.LibsndfileError) as error:
        raise UserError(f"input {path} cannot be read as audio ({error}); pass a valid audio file") from error
    if wave.shape[0] == 0:
        raise UserError(f"input {path} holds no samples; pass a non-empty audio file")
    return {"audio": torch.from_numpy(wave.T.copy()), "sample_rate": int(rate)}


def _first_fasta_sequence(path: Path) -> str:
    from tabrasa.data.fasta import read_fasta

    for _, sequence in read_fasta(path):
        return sequence
    raise UserError(f"input {path} holds no FASTA record; pass a file with a '>header' line and residues")


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a long text is no path: the name is too long for the file system
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
