"""A run's checkpoints carry its learned vocabulary, and a rebuilt run encodes with it even where the cache
holds another one (another machine, a cleared cache, a vocabulary an older tabrasa numbered otherwise)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from tokenizers import Tokenizer as HFTokenizer

import tabrasa
from tabrasa.tokenizers.vocabulary_record import CHECKPOINT_KEY, vocabulary_sha256
from tabrasa.training import load_checkpoint, rebuild
from tests.deploy.conftest import fit_text_run

TEXTS = ["a good film, really good", "a bad film, really bad", "really"]


@pytest.fixture(scope="module")
def moved_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the run as trained, a copy whose cache holds the same vocabulary with two ids swapped)."""
    root = tmp_path_factory.mktemp("vocabulary")
    run = fit_text_run(root, "tiny", {"class_path": "tabrasa.backbone.Encoder", "init_args": {
        "config": {"dim": 32, "depth": 1, "heads": 2, "max_len": 64}}}, max_epochs=2)  # fmt: skip
    moved = root / "moved"
    shutil.copytree(run, moved)
    config = yaml.safe_load((moved / "config.yaml").read_text())
    (cache,) = (root / "cache").rglob("vocab-*.json")
    other_cache = root / "other-cache"
    other = other_cache / cache.relative_to(root / "cache")
    other.parent.mkdir(parents=True)
    vocabulary = json.loads(cache.read_text())
    ids = vocabulary["model"]["vocab"]
    ids["good"], ids["bad"] = ids["bad"], ids["good"]  # what a retrained, renumbered vocabulary amounts to
    other.write_text(json.dumps(vocabulary))
    config["data"]["init_args"]["cache_dir"] = str(other_cache)
    (moved / "config.yaml").write_text(yaml.safe_dump(config))
    return run, moved


def test_every_checkpoint_keeps_the_vocabulary_it_was_trained_with(moved_run: tuple[Path, Path]) -> None:
    run, _ = moved_run
    trained = tabrasa.load(str(run))
    for checkpoint in sorted((run / "checkpoints").glob("*.ckpt")):
        record = load_checkpoint(checkpoint)[CHECKPOINT_KEY]["tokenizer"]
        assert record["sha256"] == vocabulary_sha256(trained.tokenizer.hf)  # type: ignore[attr-defined]


def test_a_run_rebuilt_beside_another_vocabulary_reads_its_own(moved_run: tuple[Path, Path]) -> None:
    run, moved = moved_run
    expected = tabrasa.load(str(run)).predict(TEXTS)
    assert tabrasa.load(str(moved)).predict(TEXTS) == expected


def test_without_the_record_the_moved_run_would_read_swapped_ids(
    moved_run: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counter-test: the test above can fail. The cache's vocabulary really is another one."""
    run, moved = moved_run
    expected = tabrasa.load(str(run)).predict(TEXTS)
    monkeypatch.setattr(rebuild, "restore_vocabularies", lambda *args: 0)
    assert tabrasa.load(str(moved)).predict(TEXTS) != expected


def test_a_joint_task_keeps_and_restores_each_tasks_vocabulary(tmp_path: Path) -> None:
    from tabrasa.backbone import Encoder
    from tabrasa.backbone.config import EncoderConfig
    from tabrasa.tasks.joint import JointTask
    from tabrasa.tokenizers import ProteinTokenizer
    from tabrasa.tokenizers.learned_vocabulary import SubwordTokenizer

    def joint(swap: tuple[str, str] | None = None) -> JointTask:
        words = SubwordTokenizer(vocab_size=40, max_length=16)
        words.fit(lambda: ["a good film", "a bad film"] * 5, tmp_path / "vocab.json")
        if swap is not None:  # the same vocabulary numbered otherwise, as another machine's cache may hold
            state = json.loads(words.hf.to_str())
            ids = state["model"]["vocab"]
            ids[swap[0]], ids[swap[1]] = ids[swap[1]], ids[swap[0]]
            words.use_vocabulary(HFTokenizer.from_str(json.dumps(state)))
        backbone = Encoder(EncoderConfig(dim=16, depth=1, heads=2, max_len=32))
        tokenizers = {"reviews": words, "proteins": ProteinTokenizer(max_length=16)}
        return JointTask(tokenizers, {"reviews": 2, "proteins": 3}, backbone)

    trained, elsewhere = joint(), joint(swap=("good", "bad"))
    checkpoint: dict[str, Any] = {}
    trained.on_save_checkpoint(checkpoint)
    assert set(checkpoint[CHECKPOINT_KEY]) == {"reviews"}  # the protein tokenizer learns nothing
    reviews = vocabulary_sha256(trained.tokenizers["reviews"].hf)  # type: ignore[attr-defined]
    assert vocabulary_sha256(elsewhere.tokenizers["reviews"].hf) != reviews  # type: ignore[attr-defined]
    elsewhere.on_load_checkpoint(checkpoint)
    assert vocabulary_sha256(elsewhere.tokenizers["reviews"].hf) == reviews  # type: ignore[attr-defined]
