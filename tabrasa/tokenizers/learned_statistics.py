"""MeasuredAudioTokenizer: an AudioTokenizer whose per-mel-bin mean and std are measured on the training
clips a data module hands it (`fit`, cached as one JSON file), not given.

Datasets differ: AudioSet's log-mels are about -4.27 ± 4.57, espeak-ng words with digital silence about
-8 ± 6, so a dataset's own statistics normalise its features to about 0 ± 1.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pytorch_lightning.utilities import rank_zero_info

from tabrasa.errors import UserError
from tabrasa.io import atomic_write
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.audio_features import WaveformInput, mel_statistics
from tabrasa.tokenizers.learned import not_fitted

MEASURED = ("mean", "std", "stats")  # what `fit` gives an AudioTokenizer (stats: the two as given)


class MeasuredAudioTokenizer(AudioTokenizer):
    """Every setting is AudioTokenizer's (`settings`, by name) but mean and std, which `fit` measures on
    the log-mel of the clips it is handed (waveforms at input_sample_rate, or mappings with their rate)."""

    def __init__(self, **settings: Any) -> None:
        given = sorted(set(settings) & {"mean", "std"})
        if given:
            raise UserError(
                f"MeasuredAudioTokenizer measures mean and std on the training clips and takes neither; drop "
                f"{' and '.join(given)}, or use AudioTokenizer to give them"
            )
        self.settings = settings
        super().__init__(mean=0.0, std=1.0, **settings)  # every setting checked now, with stand-ins ...
        for name in MEASURED:  # ... which go, so that encoding before `fit` is an error, never silent
            delattr(self, name)

    def __getattr__(self, name: str) -> Any:
        raise not_fitted(self, name)  # reached only for the statistics, before `fit`

    @property
    def fitted(self) -> bool:
        return "mean" in self.__dict__

    def learned_settings(self) -> dict[str, Any]:
        """n_mels, and any log-mel setting away from AudioTokenizer's default: the statistics depend on
        them. Defaults stay out of the key, which keeps the name earlier runs cached them under."""
        defaults = inspect.signature(AudioTokenizer.__init__).parameters
        moved = {
            name: getattr(self, name)
            for name in ("sample_rate", "win_ms", "hop_ms")
            if getattr(self, name) != defaults[name].default
        }
        return {"n_mels": self.n_mels, **moved}

    def fit(self, inputs: Callable[[], Iterable[WaveformInput | dict[str, Any]]], cache: Path) -> None:
        """The statistics cached at `cache`, or measured over every frame of the clips `inputs()` gives
        (without SpecAugment or the cell permutation: they are per mel bin) and saved there."""
        if self.fitted:
            return
        if cache.exists():
            stats = json.loads(cache.read_text())
            mean, std = stats["mean"], stats["std"]
        else:
            rank_zero_info(f"measuring the log-mel mean and std of the training clips for {cache}")
            plain = {**self.settings, "permute_elements_seed": None, "train": False}
            raw = AudioTokenizer(**plain, mean=0.0, std=1.0)  # features as they are, unnormalised
            features = [raw.encode(clip)["features"] for clip in inputs()]
            mean, std = mel_statistics(features)
            measured = json.dumps({"mean": mean, "std": std, "clips": len(features)})
            atomic_write(cache, lambda tmp: tmp.write_text(measured))
        training = self.training
        AudioTokenizer.__init__(self, **self.settings, mean=mean, std=std)
        self.training = training
