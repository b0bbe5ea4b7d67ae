"""KeywordsDataModule: spoken keywords from speech engines, held-out voices, noisy, as Arrow clips.

Speech Commands v2's 35 words (Warden 2018) spoken by a few hundred synthetic speakers (espeak-ng and flite
voices × rates × pitches; `speakers.py`), generated once and cached (`build.py`). Validation and test hold
out whole voices and carry one fixed noisy rendition each (5–20 dB SNR over the word); training clips are
re-mixed every time they are read: a new time shift, noise window, SNR and gain (`noise.py`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import datasets
import numpy as np
import torch
from torch.utils.data import Dataset

from tabrasa.data.base_module import FittingData
from tabrasa.data.cache import cache_root, settings_key
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.keywords.build import KeywordsSettings, from_int16, load_or_build
from tabrasa.data.keywords.noise import NOISE_KINDS, place
from tabrasa.data.keywords.synthesis import DEBIAN_PACKAGES, require_engines
from tabrasa.data.keywords.words import select_words
from tabrasa.data.torch_dataset import EncodedDataset, arrow_columns
from tabrasa.tokenizers.base import Batch, in_mode

STATISTICS_CLIPS = 1024  # training mixes a tokenizer that measures log-mel statistics is handed


class KeywordsDataModule(TabrasaDataModule):
    """words: a subset of the 35 words (None = all). speakers: size of the speaker table, of which
    flite_fraction are flite voices; val_fraction / test_fraction of the *voices* are held out.
    snr_db / gain_db: noise level over the word and overall gain, uniform ranges in dB. noise_kinds: any of
    white, pink, brown, babble. processes: speech-engine processes while generating.
    tokenizer: required; the clips are 1 s at 16 kHz (its input_sample_rate; 101 centred 10 ms frames).
    A MeasuredAudioTokenizer's per-mel-bin statistics are measured on seeded training mixes (cached with
    the data). limit: only the first `limit` clips of each split are generated."""

    tokenizer_hint = (
        "{class_path: tabrasa.tokenizers.learned_statistics.MeasuredAudioTokenizer, "
        "init_args: {input_sample_rate: 16000, max_frames: 101, truncation: error}}"
    )
    # An older tabrasa's data settings, the tokenizer's now.
    moved_to_tokenizer: ClassVar[Mapping[str, str]] = {
        name: name for name in ("n_mels", "patch_size", "freq_mask", "time_mask", "permute_elements_seed")
    }

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
        processes: int = 2,
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
        self.processes = processes
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

    def raw_input(self, row: dict[str, Any], split: str) -> np.ndarray:
        """One row → its waveform, for readers that take each example once (a sklearn floor, predict):
        the fixed mix outside training; in training one mix, seeded by the clip's samples so that a row
        always gives the same one (training itself draws a fresh mix each epoch, in `fetch`)."""
        if split != "train":
            return self.audio(row, train=False)
        clip = zlib.crc32(np.ascontiguousarray(row["utterance"]).tobytes())
        return self.audio(row, train=True, rng=np.random.default_rng([self.seed, 11, clip]))

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

    def fitting_data(self, learned: dict[str, Any]) -> FittingData:
        """STATISTICS_CLIPS seeded training mixes (one fixed noise draw each) and a cache file beside the
        clips, keyed by the tokenizer's settings and the number of clips."""

        def mixes() -> Iterator[torch.Tensor]:
            train = self.load_splits()["train"]
            for i in range(min(STATISTICS_CLIPS, len(train))):
                yield torch.from_numpy(self.audio(train[i], True, np.random.default_rng([self.seed, 7, i])))

        return mixes, self.path / f"mel-{settings_key({**learned, 'clips': STATISTICS_CLIPS})}.json"
