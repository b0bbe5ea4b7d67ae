"""Streaming corpora: a data module's splits written with litdata.optimize and streamed back, batch for
batch the module's own; seeded shuffling; disjoint DDP ranks; exact mid-epoch resume after SIGKILL; and
damaged or partial corpora stopped with a one-line error naming the file."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytorch_lightning as pl
import torch

import tabrasa.data.streaming_prepare as streaming_prepare
from tabrasa.backbone.config import EncoderConfig
from tabrasa.backbone.encoder import Encoder
from tabrasa.data.loader import LoaderConfig
from tabrasa.data.protein_classification import ProteinClassificationDataModule, ProteinRecord
from tabrasa.data.streaming import CORPUS_FILE, StreamingDataModule, check_corpus
from tabrasa.data.streaming_prepare import write_streaming_corpus
from tabrasa.data.unlabelled.base import ListInputs, UnlabelledDataModule
from tabrasa.errors import UserError
from tabrasa.tasks.pretraining import MaskedTokenModel
from tabrasa.tokenizers.protein import ProteinTokenizer
from tests.data.streaming_runs import BATCH

ROOT = Path(__file__).resolve().parents[2]
AMINO = "ACDEFGHIKLMNPQRSTVWY"
TOKENIZER = ProteinTokenizer(max_length=16)


def random_proteins(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["M" + "".join(rng.choice(list(AMINO), size=int(rng.integers(5, 30)))) for _ in range(n)]


class ToyProteins(ProteinClassificationDataModule):
    """160 random proteins in 3 classes."""

    @property
    def name(self) -> str:
        return "toy-proteins"

    def load_records(self) -> Iterator[ProteinRecord]:
        for i, sequence in enumerate(random_proteins(160)):
            yield ProteinRecord(f"p{i}", sequence, "abc"[i % 3])


class ToySequences(UnlabelledDataModule):
    def load_inputs(self) -> ListInputs:
        return ListInputs(random_proteins(100, seed=1))


def labelled(cache: Path) -> ToyProteins:
    return ToyProteins(tokenizer=TOKENIZER, val_size=16, test_size=16, cache_dir=str(cache))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[ToyProteins, Path]:
    root = tmp_path_factory.mktemp("streaming")
    data = labelled(root / "cache")
    data.setup()
    return data, write_streaming_corpus(data, root / "corpus", chunk_bytes="1KB")


def streaming(path: Path, **kwargs: Any) -> StreamingDataModule:
    return StreamingDataModule(str(path), loader=LoaderConfig(batch_size=BATCH), **kwargs)


def indices(loader: Any) -> list[int]:
    return [i for batch in loader for i in batch["index"].tolist()]


def test_streamed_batches_are_the_modules_own_batches(written: tuple[ToyProteins, Path]) -> None:
    data, path = written
    corpus = streaming(path)
    assert corpus.num_outputs == 3 and corpus.class_names == ["a", "b", "c"] and corpus.has_test_split
    assert corpus.split_sizes == {s: len(rows) for s, rows in data.splits.items()}
    assert len(list((path / "train").glob("chunk-*.bin"))) > 3, "the fixture should span several chunks"
    for split, loader in (("validation", corpus.val_dataloader()), ("test", corpus.test_dataloader())):
        batches = list(loader)
        assert [i for b in batches for i in b["index"].tolist()] == list(range(len(data.splits[split])))
        for batch in batches:
            expected = data.dataset(split).__getitems__(batch["index"].tolist())  # type: ignore[attr-defined]
            for key in ("input_ids", "attention_mask", "label"):
                assert batch[key].dtype == expected[key].dtype, key
                assert torch.equal(batch[key], expected[key]), key
    assert corpus.split_record == {"method": "random", "stratified": True, "seed": 0}


def test_a_corpus_without_labels_serves_pretraining(tmp_path: Path) -> None:
    source = ToySequences(tokenizer=TOKENIZER, val_size=10)
    path = write_streaming_corpus(source, tmp_path / "corpus", chunk_bytes="1KB")
    corpus = streaming(path)
    assert corpus.num_outputs == 0 and corpus.class_names is None and not corpus.has_test_split
    assert corpus.split_sizes == {"train": 90, "validation": 10}
    batch = next(iter(corpus.train_dataloader()))
    assert "label" not in batch and batch["input_ids"].shape[0] == BATCH
    assert sorted(indices(corpus.train_dataloader())) == list(range(90))


def test_training_order_is_seeded_reshuffled_each_epoch_and_complete(
    written: tuple[ToyProteins, Path],
) -> None:
    data, path = written
    loader = streaming(path).train_dataloader()
    first, second = indices(loader), indices(loader)
    assert sorted(first) == sorted(second) == list(range(len(data.splits["train"])))
    assert first != sorted(first) and second != first
    assert indices(streaming(path).train_dataloader()) == first  # the same seed, the same order
    assert indices(streaming(path, seed=1).train_dataloader()) != first


def test_the_tokenizer_is_rebuilt_from_the_corpus_and_a_different_one_refused(
    written: tuple[ToyProteins, Path],
) -> None:
    _, path = written
    rebuilt = streaming(path).tokenizer
    assert isinstance(rebuilt, ProteinTokenizer) and rebuilt.max_length == 16
    assert streaming(path, tokenizer=ProteinTokenizer(max_length=16)).tokenizer.max_length == 16
    with pytest.raises(UserError, match=r"is not the one .* was encoded with"):
        streaming(path, tokenizer=ProteinTokenizer(max_length=32))


def test_an_existing_folder_is_never_overwritten(written: tuple[ToyProteins, Path], tmp_path: Path) -> None:
    data, path = written
    before = {p.name: p.stat().st_mtime_ns for p in path.rglob("*")}
    with pytest.raises(UserError, match="exists; remove it or choose another folder"):
        write_streaming_corpus(data, path)
    assert {p.name: p.stat().st_mtime_ns for p in path.rglob("*")} == before


def test_an_interrupted_write_publishes_nothing(
    written: tuple[ToyProteins, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, _ = written
    written_chunks: list[Path] = []

    def dies_after_the_first_split(folder: Path) -> dict[str, Any]:
        written_chunks.extend(folder.glob("chunk-*.bin"))
        raise KeyboardInterrupt  # as a user's Ctrl-C between two splits

    monkeypatch.setattr(streaming_prepare, "chunk_records", dies_after_the_first_split)
    with pytest.raises(KeyboardInterrupt):
        write_streaming_corpus(data, tmp_path / "corpus", chunk_bytes="1KB")
    assert written_chunks, "the first split had been written when the run was interrupted"
    assert not list(tmp_path.iterdir()), "neither the corpus nor its temporary folder may remain"


def damaged_copy(path: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    return copy


@pytest.mark.parametrize("damage", ["truncate", "delete"])
def test_a_partial_chunk_stops_with_one_line_naming_it(
    written: tuple[ToyProteins, Path], tmp_path: Path, damage: str
) -> None:
    _, path = written
    copy = damaged_copy(path, tmp_path)
    streaming(copy)  # counter-test: the intact copy loads
    chunk = sorted((copy / "train").glob("chunk-*.bin"))[2]
    if damage == "truncate":
        chunk.write_bytes(chunk.read_bytes()[: chunk.stat().st_size // 2])
    else:
        chunk.unlink()
    with pytest.raises(UserError) as error:
        streaming(copy)
    message = str(error.value)
    assert str(chunk) in message and "\n" not in message
    assert ("truncated" if damage == "truncate" else "missing") in message


def test_changed_bytes_pass_the_size_check_and_fail_the_checksum(
    written: tuple[ToyProteins, Path], tmp_path: Path
) -> None:
    _, path = written
    copy = damaged_copy(path, tmp_path)
    chunk = sorted((copy / "validation").glob("chunk-*.bin"))[0]
    raw = bytearray(chunk.read_bytes())
    raw[-3] ^= 0xFF
    chunk.write_bytes(bytes(raw))
    check_corpus(copy, verify="size")  # same length: a stat cannot tell
    with pytest.raises(UserError, match=f"chunk {chunk} does not match its recorded SHA-256"):
        streaming(copy, verify="checksum")


@pytest.mark.parametrize("missing", [CORPUS_FILE, "train/index.json"])
def test_a_missing_index_is_named(written: tuple[ToyProteins, Path], tmp_path: Path, missing: str) -> None:
    _, path = written
    copy = damaged_copy(path, tmp_path)
    (copy / missing).unlink()
    with pytest.raises(UserError, match=str(copy / missing)):
        streaming(copy)
    with pytest.raises(UserError, match="does not exist"):
        streaming(tmp_path / "nowhere")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.data.streaming_runs", *args]


@pytest.mark.slow
@pytest.mark.distributed
def test_two_ddp_ranks_stream_disjoint_shares(written: tuple[ToyProteins, Path], tmp_path: Path) -> None:
    data, path = written
    port, outs = free_port(), [tmp_path / f"rank{r}.json" for r in (0, 1)]
    ranks = [
        subprocess.Popen(
            child("rank", str(path), str(outs[r]), "--rank", str(r), "--port", str(port)), cwd=ROOT
        )
        for r in (0, 1)
    ]
    assert [p.wait(timeout=300) for p in ranks] == [0, 0]
    (r0_first, r0_second), (r1_first, r1_second) = (json.loads(o.read_text()) for o in outs)
    total = len(data.splits["train"])
    assert not set(r0_first) & set(r1_first) and not set(r0_second) & set(r1_second)
    assert len(r0_first) == len(r1_first) > 0  # drop_last under DDP: equal steps on both ranks
    assert total - 2 * BATCH * 2 <= len(r0_first) + len(r1_first) <= total
    assert r0_second != r0_first  # each epoch reshuffles


def run_loop(path: Path, log: Path, state: Path, workers: int, *extra: str) -> subprocess.Popen[bytes]:
    args = ["loop", str(path), str(log), "--state", str(state), "--workers", str(workers), *extra]
    return subprocess.Popen(child(*args), cwd=ROOT)


def logged(log: Path) -> list[list[int]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [0, 1])
def test_a_sigkilled_loop_resumes_with_exactly_the_remaining_samples(
    written: tuple[ToyProteins, Path], tmp_path: Path, workers: int
) -> None:
    _, path = written
    config = LoaderConfig(batch_size=BATCH, num_workers=workers)  # the children's loader, uninterrupted
    epoch = [b["index"].tolist() for b in StreamingDataModule(str(path), loader=config).train_dataloader()]

    log, state = tmp_path / "killed" / "batches.log", tmp_path / "killed" / "loader.state"
    log.parent.mkdir()
    process = run_loop(path, log, state, workers, "--pause-at", "6")
    try:
        deadline = time.monotonic() + 300  # a child imports torch and Lightning: slow on a busy machine
        while not (log.parent / "paused").exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (log.parent / "paused").exists(), "the loop never reached its pause"
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
    assert process.wait(timeout=30) == -signal.SIGKILL
    done = torch.load(state, weights_only=False)["batches"]
    assert done == 6 and len(epoch) > done + 2, "the kill must land mid-epoch"
    assert logged(log)[:done] == epoch[:done]

    resumed_log = tmp_path / "resumed.log"
    assert run_loop(path, resumed_log, state, workers, "--resume").wait(timeout=300) == 0
    resumed = logged(resumed_log)
    assert resumed == epoch[done:]  # exactly the samples the killed run had not reached, in order
    assert resumed != epoch  # counter-check: a loop that ignored the state would replay the whole epoch


@pytest.mark.slow
def test_lightning_pretrains_on_a_corpus_and_checkpoints_its_loader(tmp_path: Path) -> None:
    path = write_streaming_corpus(
        ToySequences(tokenizer=TOKENIZER, val_size=10), tmp_path / "corpus", chunk_bytes="1KB"
    )
    data = streaming(path)
    config = EncoderConfig(dim=32, depth=2, heads=4, max_len=16, dropout=0.0)
    model = MaskedTokenModel(tokenizer=data.tokenizer, backbone=Encoder(config))
    trainer = pl.Trainer(
        max_steps=5, accelerator="cpu", logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, limit_val_batches=1, val_check_interval=5,
    )  # fmt: skip
    trainer.fit(model, datamodule=data)
    assert trainer.global_step == 5
    trainer.save_checkpoint(tmp_path / "last.ckpt")
    saved = torch.load(tmp_path / "last.ckpt", weights_only=False)
    loader_state = saved["loops"]["fit_loop"]["state_dict"]["combined_loader"][0]
    assert loader_state["num_samples_yielded"] == 5 * BATCH


def test_data_prepare_writes_a_corpus_for_labelled_and_unlabelled_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabrasa.cli.data import main
    from tests.data.test_psortb import write_fake_psortb

    monkeypatch.setenv("PSORTB_ROOT", str(tmp_path / "psort"))
    monkeypatch.setenv("TABRASA_CACHE", str(tmp_path / "cache"))
    write_fake_psortb(tmp_path / "psort")
    out = tmp_path / "psortb-corpus"
    args = ["prepare", "psortb", "--set", "split=random", "--set", "test_size=10", "--streaming", str(out)]
    assert main([*args, "--chunk-bytes", "2KB"]) == 0
    assert f"streaming corpus: {out}" in capsys.readouterr().out
    assert streaming(out).split_sizes["test"] == 10 and streaming(out).num_outputs == 5

    config = tmp_path / "sequences.yaml"
    residues = {"class_path": "tabrasa.tokenizers.protein.ProteinTokenizer", "init_args": {"max_length": 16}}
    init_args = {"val_size": 10, "tokenizer": residues}
    config.write_text(json.dumps({"class_path": f"{__name__}.ToySequences", "init_args": init_args}))
    assert main(["prepare", "--config", str(config), "--streaming", str(tmp_path / "unlabelled")]) == 0
    assert "90 inputs" in capsys.readouterr().out
    assert streaming(tmp_path / "unlabelled").split_sizes == {"train": 90, "validation": 10}
