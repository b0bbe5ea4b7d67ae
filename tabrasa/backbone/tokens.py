"""Token types shared by tokenizers and backbones: the grid that image and spectrogram tokens lie on.

It lives in the backbone package, which imports nothing from tokenizers, so tokenizers (which build it)
and backbones (which read it) both import it without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenGrid:
    """Tokens `prefix:` form a row-major grid of `height` × `width` (image patches, spectrogram patches).

    The first `prefix` tokens (CLS, distillation, registers) sit outside the grid. Grid-aware layers (axial
    attention, CNN baselines) use this; plain attention ignores it.
    """

    height: int
    width: int
    prefix: int = 0

    @property
    def size(self) -> int:
        return self.height * self.width
