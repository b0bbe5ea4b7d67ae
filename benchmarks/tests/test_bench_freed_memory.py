"""The freed-memory benchmark refuses a bad arm or modality before it starts any process."""

from __future__ import annotations

import pytest

from benchmarks.bench_freed_memory import main


def test_an_unknown_arm_is_refused_with_the_modality_s_arms_named() -> None:
    with pytest.raises(Exception, match="spectrogram_cnn") as refused:
        main(["--modality", "audio", "--arm", "spectrogram"])
    assert "spectrogram" in str(refused.value)


def test_an_unknown_modality_is_refused_by_the_parser() -> None:
    with pytest.raises(SystemExit):
        main(["--modality", "speech", "--arm", "spectrogram_cnn"])
