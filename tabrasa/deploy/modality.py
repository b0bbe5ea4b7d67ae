"""Which kind of raw input a run reads, decided by its tokenizer, and which file suffixes hold each kind."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tabrasa.errors import UserError
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.base import Tokenizer
from tabrasa.tokenizers.image import ImageTokenizer
from tabrasa.tokenizers.protein import ProteinTokenizer

Modality = Literal["text", "image", "audio", "protein"]

SUFFIXES: dict[Modality, frozenset[str]] = {
    "text": frozenset({".txt", ".csv", ".tsv", ".jsonl"}),
    "image": frozenset({".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff"}),
    "audio": frozenset({".wav", ".flac", ".ogg", ".aiff", ".aif"}),
    "protein": frozenset({".fasta", ".fa", ".faa", ".fas", ".txt"}),
}
HINTS: dict[Modality, str] = {
    "text": "a .txt file (one example per line), a .csv/.jsonl file with --column, or a folder of .txt files",
    "image": "an image file or a folder of images (.png, .jpg, ...)",
    "audio": "an audio clip or a folder of clips (.wav, .flac, .ogg)",
    "protein": "a FASTA file (.fasta, .fa) or a .txt file with one sequence per line",
}


def modality_of(tokenizer: Tokenizer) -> Modality:
    """The raw input `tokenizer` encodes. Protein before text: the ESM tokenizers read strings too."""
    if isinstance(tokenizer, ProteinTokenizer):
        return "protein"
    if isinstance(tokenizer, ImageTokenizer):
        return "image"
    if isinstance(tokenizer, AudioTokenizer):
        return "audio"
    if callable(getattr(tokenizer, "encode", None)):
        return "text"  # subword, byte and pretrained text tokenizers all take a str
    raise UserError(f"{type(tokenizer).__name__} reads no known kind of raw file")


def kind_of_path(path: Path) -> Modality | None:
    """The modality a file's suffix belongs to (.txt counts as text; protein accepts it too)."""
    suffix = path.suffix.lower()
    for modality in ("image", "audio", "text", "protein"):
        if suffix in SUFFIXES[modality]:  # type: ignore[index]
            return modality  # type: ignore[return-value]
    return None


def check_modality(path: Path, files: list[Path], expected: Modality) -> None:
    """Refuse input whose files are of another modality than the run's (an image folder for a text model)."""
    kinds = [kind_of_path(f) for f in files]
    accepted = [k for k, f in zip(kinds, files, strict=True) if f.suffix.lower() in SUFFIXES[expected]]
    if accepted:
        return
    known = sorted({k for k in kinds if k is not None})
    found = (
        f"{', '.join(known)} files" if known else f"files with suffixes {sorted({f.suffix for f in files})}"
    )
    raise UserError(f"{path} holds {found}, but this run is a {expected} model; give it {HINTS[expected]}")
