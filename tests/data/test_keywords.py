"""Spoken keywords: seeded speakers and data, held-out voices, measured SNR, cache reuse, clear errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch

from tabrasa.data.base_module import FittingData
from tabrasa.data.keywords import build
from tabrasa.data.keywords.build import KeywordsSettings, from_int16, load_or_build
from tabrasa.data.keywords.datamodule import KeywordsDataModule
from tabrasa.data.keywords.noise import Mixer, babble, coloured_noise, place, snr_db
from tabrasa.data.keywords.speakers import speaker_table, split_speakers
from tabrasa.data.keywords.synthesis import EngineMissingError
from tabrasa.data.keywords.words import BABBLE_PHRASES, WORDS, select_words
from tabrasa.tokenizers.learned import NotFittedError
from tabrasa.tokenizers.learned_statistics import MeasuredAudioTokenizer

TINY = KeywordsSettings(words=("yes", "no", "up", "down"), speakers=12, limit=6)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """18 clips (6 per split) and their noise banks, generated once for the module, laid out as a data
    module with cache_dir=<entry>/../.. finds them."""
    return load_or_build(TINY, tmp_path_factory.mktemp("cache") / "keywords")


def clips(path: Path) -> datasets.DatasetDict:
    return datasets.load_from_disk(str(path / "clips"))


def test_the_35_speech_commands_words_in_their_fixed_order() -> None:
    assert len(WORDS) == len(set(WORDS)) == 35
    assert WORDS[:3] == ("zero", "one", "two") and WORDS[10] == "yes" and WORDS[-1] == "wow"
    assert select_words(["no", "yes"]) == ("no", "yes")
    with pytest.raises(ValueError, match="not Speech Commands words"):
        select_words(["yes", "maybe"])
    said_in_babble = {w for phrase in BABBLE_PHRASES for w in phrase.lower().split()}
    assert not said_in_babble & set(WORDS)  # the background never says a keyword


def test_speaker_table_is_seeded_and_splits_hold_out_whole_voices() -> None:
    table = speaker_table(300, seed=0)
    assert table == speaker_table(300, seed=0) and table != speaker_table(300, seed=1)
    assert table[:90] == speaker_table(100, seed=0)[:90]  # speaker i depends on (seed, i) only
    assert len({s.name for s in table}) == 300 and {s.engine for s in table} == {"espeak-ng", "flite"}
    splits = split_speakers(table, seed=0)
    voices = {split: {s.group for s in speakers} for split, speakers in splits.items()}
    assert not voices["train"] & voices["test"] and not voices["train"] & voices["validation"]
    assert not voices["validation"] & voices["test"]
    for split in ("train", "test"):  # flite has too few voices (4) to spare one for validation
        assert {s.engine for s in splits[split]} == {"espeak-ng", "flite"}
    assert {s.engine for s in splits["validation"]} == {"espeak-ng"}
    assert sum(map(len, splits.values())) == 300 and len(splits["test"]) >= 0.1 * 300


def test_generation_is_deterministic_from_the_seed(tiny: Path, tmp_path: Path) -> None:
    again = clips(load_or_build(TINY, tmp_path))
    first = clips(tiny)
    for split in first:
        for column in ("utterance", "noise", "onset", "snr_db", "label", "speaker"):
            assert first[split][column] == again[split][column], (split, column)
    other = clips(load_or_build(dataclasses.replace(TINY, seed=1), tmp_path))
    assert first["train"]["speaker"] != other["train"]["speaker"]


def test_built_splits_have_disjoint_speakers_and_voices(tiny: Path) -> None:
    rows = clips(tiny)
    assert len(rows["train"]) == 6 and 1 <= len(rows["validation"]) <= 6 and 1 <= len(rows["test"]) <= 6
    speakers = {split: set(rows[split]["speaker"]) for split in rows}
    voices = {split: set(rows[split]["voice"]) for split in rows}
    for a, b in (("train", "validation"), ("train", "test"), ("validation", "test")):
        assert not speakers[a] & speakers[b] and not voices[a] & voices[b]
    assert rows["train"].features["label"].names == ["yes", "no", "up", "down"]


def test_fixed_mixes_are_within_the_snr_range_measured_on_the_mix(tiny: Path) -> None:
    for split in ("validation", "test"):
        for row in clips(tiny)[split]:
            utterance = from_int16(np.array(row["utterance"]))
            speech = place(utterance, row["onset"], TINY.samples)
            mix = speech + from_int16(np.array(row["noise"]))
            measured = snr_db(speech, mix - speech, row["onset"], len(utterance))
            assert 5.0 - 0.05 <= measured <= 20.0 + 0.05
            assert measured == pytest.approx(row["snr_db"], abs=1e-3)
            assert row["noise_kind"] in TINY.noise_kinds


def test_training_mixes_shift_scale_and_stay_within_the_snr_range() -> None:
    rng = np.random.default_rng(0)
    word = np.sin(np.arange(4000) / 7.0).astype(np.float32)
    bank = np.stack([coloured_noise(kind, 24000, 16000, rng) for kind in ("white", "pink", "brown")])
    mixer = Mixer(16000, snr_db=(5.0, 20.0), gain_db=(-12.0, 6.0))
    mixes = [mixer.draw(word, bank, rng) for _ in range(50)]
    for mix in mixes:
        assert 5.0 - 1e-3 <= snr_db(mix.speech, mix.noise, mix.onset, len(word)) <= 20.0 + 1e-3
        assert -12.0 <= mix.gain_db <= 6.0 and 0 <= mix.onset <= 16000 - 4000
        assert mix.audio.shape == (16000,) and np.isfinite(mix.audio).all()
    assert len({m.onset for m in mixes}) > 40 and len({m.noise_index for m in mixes}) == 3


def test_coloured_noise_spectra_tilt_and_babble_has_no_silent_gap() -> None:
    rng = np.random.default_rng(0)

    def low_to_high(x: np.ndarray) -> float:
        power = np.abs(np.fft.rfft(x)) ** 2
        freqs = np.fft.rfftfreq(len(x), 1 / 16000)
        return power[(freqs > 50) & (freqs < 500)].mean() / power[freqs > 4000].mean()

    white, pink, brown = (coloured_noise(k, 32000, 16000, rng) for k in ("white", "pink", "brown"))
    assert low_to_high(white) < 2 < 10 < low_to_high(pink) < low_to_high(brown)
    words = [np.sin(np.arange(n) / 5.0).astype(np.float32) for n in (3000, 5000, 7000)]
    noise = babble(words, 32000, 16000, rng)
    window_rms = np.sqrt((noise.reshape(-1, 1600) ** 2).mean(axis=1))  # 100 ms windows
    assert np.sqrt((noise**2).mean()) == pytest.approx(1.0, rel=1e-4) and window_rms.min() > 0.05


def test_a_cached_dataset_is_reused_and_new_settings_regenerate(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_synthesis(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached dataset was generated again")

    monkeypatch.setattr(build, "speak_all", no_synthesis)
    assert load_or_build(TINY, tiny.parent) == tiny
    with pytest.raises(AssertionError, match="generated again"):
        load_or_build(dataclasses.replace(TINY, snr_db=(0.0, 5.0)), tiny.parent)


@pytest.mark.parametrize("engine", ["espeak-ng", "flite"])
def test_a_missing_engine_names_its_debian_package(
    engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    other = {"espeak-ng": "flite", "flite": "espeak-ng"}[engine]
    (bin_dir / other).symlink_to(f"/usr/bin/{other}")  # only the other engine is on PATH
    monkeypatch.setenv("PATH", str(bin_dir))
    settings = dataclasses.replace(TINY, flite_fraction=0.25, limit=None)  # 9 espeak-ng + 3 flite speakers
    with pytest.raises(EngineMissingError, match=f"sudo apt-get install {engine}$"):
        load_or_build(settings, tmp_path / "cache")
    assert not (tmp_path / "cache" / settings.key).exists()


def log_mels() -> MeasuredAudioTokenizer:
    """The 1-second clips' log-mel, with its mean and std measured on the training mixes."""
    return MeasuredAudioTokenizer(input_sample_rate=16000, max_frames=101, truncation="error")


def tiny_module(tiny: Path) -> KeywordsDataModule:
    words = list(TINY.words)
    return KeywordsDataModule(
        tokenizer=log_mels(), words=words, speakers=12, limit=6, cache_dir=str(tiny.parent.parent)
    )


def test_datamodule_augments_training_only_and_evaluates_deterministically(tiny: Path) -> None:
    dm = tiny_module(tiny)
    assert dm.settings == TINY and dm.path == tiny  # the same settings find the same cache entry
    assert dm.num_outputs == 4 and list(dm.class_names) == ["yes", "no", "up", "down"]
    train, test = dm.dataset("train"), dm.dataset("test")
    assert train[0]["features"].shape == (1, 101, 64) and test[0]["features"].shape == (1, 101, 64)
    torch.testing.assert_close(test[0]["features"], test[0]["features"])
    assert not torch.equal(train[0]["features"], train[0]["features"])  # a new mix every read
    batch = train.__getitems__(list(range(4)))
    assert batch["features"].shape == (4, 101, 64) and batch["label"].tolist() == [
        int(label) for label in dm.splits["train"]["label"][:4]
    ]
    features = test.__getitems__(list(range(6)))["features"]
    assert features.mean().abs() < 0.5 and 0.5 < features.std() < 1.5  # normalised by measured statistics
    # cached beside the clips under the name it had while the data module measured them itself
    assert (tiny / "mel-b724e874737a.json").exists()
    assert MeasuredAudioTokenizer().learned_settings() == {"n_mels": 64}


def test_measured_statistics_are_read_back_not_measured_again(tiny: Path) -> None:
    first = tiny_module(tiny).tokenizer
    again = tiny_module(tiny)
    cached = again.fitting_data

    def without_clips(learned: dict[str, object]) -> FittingData:
        return (lambda: pytest.fail("cached statistics were measured again")), cached(learned)[1]

    again.fitting_data = without_clips  # type: ignore[method-assign]
    assert again.tokenizer.stats == first.stats  # type: ignore[attr-defined]
    with pytest.raises(
        NotFittedError, match=r"MeasuredAudioTokenizer\.mean is learned from the training data"
    ):
        log_mels().encode(torch.zeros(16000))  # counter-check: unfitted, it refuses instead of guessing


def test_batched_reading_equals_row_by_row_tokenising(tiny: Path) -> None:
    dm = tiny_module(tiny)
    for split in ("validation", "test"):
        count = len(dm.splits[split])
        batched = dm.dataset(split).__getitems__(list(range(count)))
        clip_by_clip = dm.tokenizer.collate([dm.tokenizer(dm.audio(row, False)) for row in dm.splits[split]])
        torch.testing.assert_close(batched["features"], clip_by_clip["features"], rtol=0, atol=1e-5)
        assert batched["label"].tolist() == [int(v) for v in dm.splits[split]["label"]]
    train = dm.dataset("train").__getitems__([0] * 8)["features"]
    assert len({t.numpy().tobytes() for t in train}) == 8, "each copy of a clip gets its own mix and masks"


def test_raw_input_gives_the_fixed_mix_outside_training_and_one_seeded_mix_per_training_clip(
    tiny: Path,
) -> None:
    dm = tiny_module(tiny)
    test_row = dm.splits["test"][0]
    np.testing.assert_array_equal(dm.raw_input(test_row, "test"), dm.audio(test_row, False))
    rows = [dm.splits["train"][i] for i in range(3)]
    first = [dm.raw_input(row, "train") for row in rows]
    for row, wave in zip(rows, first, strict=True):
        np.testing.assert_array_equal(dm.raw_input(row, "train"), wave)  # the same row, the same mix
    assert len({wave.tobytes() for wave in first}) == 3
    # counter-check: training itself still draws a fresh mix for the same row
    assert not np.array_equal(dm.audio(rows[0], True), dm.audio(rows[0], True))
    assert dm.tokenizer(first[0])["features"].shape == (101, 64)  # the tokenizer reads it as is
