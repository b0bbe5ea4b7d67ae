"""KeywordsDataModule: spoken keywords from speech engines, held-out voices, noisy, as Arrow clips.

Speech Commands v2's 35 words (Warden 2018) spoken by a few hundred synthetic speakers (espeak-ng and flite
voices × rates × pitches; `speakers.py`), generated once and cached (`build.py`). Validation and test hold
out whole voices and carry one fixed noisy rendition each (5–20 dB SNR over the word); training clips are
re-mixed every time they are read: a new time shift, noise window, SNR and gain (`noise.py`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import torch
from torch.utils.data import Dataset

from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.keywords.build import KeywordsSettings, from_int16, load_or_build
from tabrasa.data.keywords.noise import NOISE_KINDS, place
from tabrasa.data.keywords.synthesis import DEBIAN_PACKAGES, require_engines
from tabrasa.data.keywords.words import select_words
from tabrasa.data.torch_dataset import EncodedDataset, arrow_columns
from tabrasa.io import atomic_write
from tabrasa.tokenizers.audio import AudioTokenizer
from tabrasa.tokenizers.audio_features import mel_statistics
from tabrasa.tokenizers.base import Batch, in_mode

STATISTICS_CLIPS = 1024  # training mixes the per-bin log-mel mean and std are measured on


class KeywordsDataModule(TabrasaDataModule):
    """words: a subset of the 35 words (None = all). speakers: size of the speaker table, of which
    flite_fraction are flite voices; val_fraction / test_fraction of the *voices* are held out.
    snr_db / gain_db: noise level over the word and overall gain, uniform ranges in dB. noise_kinds: any of
    white, pink, brown, babble. processes: speech-engine processes while generating.
    n_mels / patch_size / freq_mask / time_mask: the AudioTokenizer's log-mel bins, frame (None) or
    (time, mel) patch tokens, and SpecAugment's largest masks (training only). permute_elements_seed: the
    tokenizer's fixed permutation of spectrogram cells (the permutation test; None: none).
    limit: only the first `limit` clips of each split are generated."""

    def __init__(
        self,
        words: list[str] | None = None,
        speakers: int = 300,
        flite_fraction: float = 0.1,
        val_fraction: float = 0.1,
        test_fraction: float = 0.15,
        snr_db: tuple[float, float] = (5.0, 20.0),
        gain_db: tuple[float, float] = (-12.0, 6.0),
        noise_kinds: list[str] | None = None,
        n_mels: int = 64,
        patch_size: list[int] | None = None,
        freq_mask: int = 8,
        time_mask: int = 20,
        processes: int = 2,
        permute_elements_seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.settings = KeywordsSettings(
            words=select_words(words),
            speakers=speakers,
            seed=self.seed,
            flite_fraction=flite_fraction,
            val_fraction=val_fraction,
            test_fraction=test_fraction,
            snr_db=(float(snr_db[0]), float(snr_db[1])),
            gain_db=(float(gain_db[0]), float(gain_db[1])),
            noise_kinds=tuple(noise_kinds or NOISE_KINDS),
            limit=self.limit,  # generation is the expensive step: only limit clips per split are spoken
        )
        self.n_mels = n_mels
        self.patch_size = patch_size
        self.freq_mask = freq_mask
        self.time_mask = time_mask
        self.processes = processes
        self.permute_elements_seed = permute_elements_seed
        self._clips: datasets.DatasetDict | None = None
        self._train_noise: np.ndarray | None = None

    @classmethod
    def check_source(cls) -> str:
        """Where the speech engines are (`tabrasa data list`); EngineMissingError if one is missing."""
        return ", ".join(f"{e} at {path}" for e, path in require_engines(DEBIAN_PACKAGES).items())

    @property
    def num_outputs(self) -> int:
        return len(self.settings.words)

    @property
    def class_names(self) -> Sequence[str]:
        return self.settings.words

    @property
    def path(self) -> Path:
        """This dataset's cache entry, generated on first use."""
        root = cache_root(self.cache_dir) / "keywords"
        return load_or_build(self.settings, root, self.processes)

    def load_splits(self) -> datasets.DatasetDict:
        if self._clips is None:
            path = self.path
            clips = datasets.load_from_disk(str(path / "clips"))
            self._clips = datasets.DatasetDict({k: v.with_format("numpy") for k, v in clips.items()})
            noise = datasets.load_from_disk(str(path / "noise"))["train"].with_format("numpy")
            self._train_noise = np.stack(list(noise["noise"])).astype(np.float32)  # (K, M)
        return self._clips

    def audio(self, row: dict[str, Any], train: bool, rng: np.random.Generator | None = None) -> np.ndarray:
        """The 1-second waveform of one row: a fresh random mix for training, the fixed one otherwise."""
        utterance = from_int16(row["utterance"])
        if train:
            self.load_splits()
            assert self._train_noise is not None
            if rng is None:  # from torch: each DataLoader worker gets its own stream, set by seed_everything
                rng = np.random.default_rng(int(torch.randint(2**62, ())))
            return self.settings.mixer().draw(utterance, self._train_noise, rng).audio
        speech = place(utterance, int(row["onset"]), self.settings.samples)
        return (speech + from_int16(row["noise"])) * np.float32(10 ** (float(row["gain_db"]) / 20))

    def dataset(self, split: str) -> Dataset[Batch]:
        rows = self.splits[split].with_format("arrow")
        train = split == "train"
        fetch = partial(self.fetch, rows=rows, train=train)
        return EncodedDataset(fetch, len(rows), in_mode(self.tokenizer, training=train))

    def fetch(
        self, indices: list[int], rows: datasets.Dataset, train: bool
    ) -> tuple[list[torch.Tensor], list[int]]:
        """A batch's rows in one Arrow read → their waveforms (mixed afresh in training) and labels."""
        columns = arrow_columns(rows[indices])
        records = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
        waves = [torch.from_numpy(self.audio(record, train)) for record in records]
        return waves, [int(record["label"]) for record in records]

    def default_tokenizer(self) -> AudioTokenizer:
        mean, std = self.mel_statistics()
        return self._make_tokenizer(mean, std, self.permute_elements_seed)

    def _make_tokenizer(
        self, mean: float | list[float], std: float | list[float], permute_elements_seed: int | None = None
    ) -> AudioTokenizer:
        rate = self.settings.sample_rate
        frames = 1 + self.settings.samples // round(rate * 0.010)  # centred 10 ms hops: 101 for 1 s
        return AudioTokenizer(
            sample_rate=rate,
            input_sample_rate=rate,
            n_mels=self.n_mels,
            mean=mean,
            std=std,
            patch_size=self.patch_size,
            max_frames=frames,
            truncation="error",
            freq_mask=self.freq_mask,
            time_mask=self.time_mask,
            permute_elements_seed=permute_elements_seed,  # never for the statistics: they are per mel bin
        )

    def mel_statistics(self) -> tuple[list[float], list[float]]:
        """Per-mel-bin mean and std of the log-mel over seeded training mixes, cached with the data."""
        path = self.path / f"mel-{settings_key({'n_mels': self.n_mels, 'clips': STATISTICS_CLIPS})}.json"
        if path.exists():
            stats = json.loads(path.read_text())
            return stats["mean"], stats["std"]
        raw = self._make_tokenizer(0.0, 1.0)
        train = self.load_splits()["train"]
        count = min(STATISTICS_CLIPS, len(train))
        features = [
            raw.encode(torch.from_numpy(self.audio(train[i], True, np.random.default_rng([self.seed, 7, i]))),
                       self.settings.sample_rate)["features"]
            for i in range(count)
        ]  # fmt: skip
        mean, std = mel_statistics(features)
        stats = json.dumps({"mean": mean, "std": std, "clips": count})
        atomic_write(path, lambda tmp: tmp.write_text(stats))
        return mean, std
