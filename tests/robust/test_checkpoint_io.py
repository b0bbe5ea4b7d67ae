"""Checkpoints are safetensors written atomically; corrupt files are refused by name; nothing is unpickled."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from pytorch_lightning.callbacks import ModelCheckpoint
from safetensors import safe_open
from safetensors.torch import save_file

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.tasks import Classifier, OptimConfig
from tabrasa.tasks.schedule import warmup_cosine
from tabrasa.tokenizers.text import TextTokenizer, train_subword_tokenizer
from tabrasa.training import (
    CorruptCheckpointError,
    SafetensorsCheckpointIO,
    load_checkpoint,
    load_hyper_parameters,
    save_checkpoint,
)

ROOT = Path(__file__).resolve().parents[2]


def lightning_like_checkpoint() -> dict[str, object]:
    """What Lightning's dump_checkpoint holds for a tabrasa Classifier after one AdamW step."""
    tokenizer = TextTokenizer(train_subword_tokenizer(["a good film", "a bad film"] * 5, vocab_size=30), 8)
    model = Classifier(tokenizer, 2, Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=8)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    scheduler = warmup_cosine(optimizer, 10, OptimConfig())
    batch = tokenizer.collate([{**tokenizer("a good film"), "label": torch.tensor(1)}])
    model.loss(model(batch), batch["label"]).backward()
    optimizer.step()
    scheduler.step()
    callback = ModelCheckpoint(monitor="val/loss")
    callback.best_model_score, callback.best_k_models = (
        torch.tensor(0.5),
        {"runs/x/best.ckpt": torch.tensor(0.5)},
    )
    return {
        "epoch": 0,
        "global_step": 1,
        "pytorch-lightning_version": "2.6.6",
        "state_dict": model.state_dict(),
        "loops": {"fit_loop": {"state_dict": {"combined_loader": [{"epoch": 0, "batches": 3}]}}},
        "callbacks": {callback.state_key: callback.state_dict()},
        "optimizer_states": [optimizer.state_dict()],
        "lr_schedulers": [scheduler.state_dict()],
        "hparams_name": "kwargs",
        "hyper_parameters": {"num_outputs": 2, "optimizer": OptimConfig(lr=3e-4), "pooling": "mean"},
    }


def assert_same(a: object, b: object, where: str = "") -> None:
    # An OrderedDict (a state dict) reads back as a dict with the same keys in the same order.
    assert type(a) is type(b) or (isinstance(a, dict) and type(b) is dict), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and torch.equal(a, b), where  # type: ignore[union-attr]
    elif isinstance(a, dict):
        assert list(a) == list(b), where  # type: ignore[arg-type]
        for key in a:
            assert_same(a[key], b[key], f"{where}/{key}")  # type: ignore[index]
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where  # type: ignore[arg-type]
        for i, (x, y) in enumerate(zip(a, b, strict=True)):  # type: ignore[call-overload]
            assert_same(x, y, f"{where}/{i}")
    else:
        assert a == b, where


def test_round_trip_keeps_every_tensor_type_and_key(tmp_path: Path) -> None:
    checkpoint = lightning_like_checkpoint()
    SafetensorsCheckpointIO().save_checkpoint(checkpoint, tmp_path / "last.ckpt")
    loaded = SafetensorsCheckpointIO().load_checkpoint(tmp_path / "last.ckpt")
    assert_same(checkpoint, loaded)
    # Integer parameter ids, tuple betas and the dataclass come back as such, so the optimizer reloads.
    assert set(loaded["optimizer_states"][0]["state"]) == set(checkpoint["optimizer_states"][0]["state"])
    assert loaded["optimizer_states"][0]["param_groups"][0]["betas"] == (0.9, 0.95)
    assert loaded["hyper_parameters"]["optimizer"] == OptimConfig(lr=3e-4)
    assert load_hyper_parameters(tmp_path / "last.ckpt") == checkpoint["hyper_parameters"]


def test_file_is_plain_safetensors_with_stable_readable_keys(tmp_path: Path) -> None:
    save_checkpoint(lightning_like_checkpoint(), tmp_path / "last.ckpt")
    assert not (tmp_path / "last.ckpt").read_bytes().startswith(b"PK")  # not torch.save's zip
    with safe_open(str(tmp_path / "last.ckpt"), framework="pt") as handle:
        keys = set(handle.keys())
        assert handle.metadata()["tabrasa.format"] == "lightning-checkpoint"
    assert "state_dict/backbone.blocks.0.attn.qkv.weight" in keys
    assert "optimizer_states/0/state/0/exp_avg" in keys
    assert list(tmp_path.iterdir()) == [tmp_path / "last.ckpt"]  # no temporary file left behind


@pytest.mark.parametrize(
    "keep", [0, 7, 100, -1], ids=["empty", "header-cut", "mid-header", "last-byte-missing"]
)
def test_truncated_checkpoint_is_refused_by_name_and_the_previous_one_still_loads(
    tmp_path: Path, keep: int
) -> None:
    good, torn = tmp_path / "best-epoch=0-step=4.ckpt", tmp_path / "last.ckpt"
    checkpoint = lightning_like_checkpoint()
    save_checkpoint(checkpoint, good)
    save_checkpoint(checkpoint, torn)
    data = torn.read_bytes()
    torn.write_bytes(data[:keep] if keep >= 0 else data[:-1])
    with pytest.raises(CorruptCheckpointError, match=re.escape(str(torn))) as error:
        load_checkpoint(torn)
    assert "truncated or corrupt" in str(error.value) and good.name in str(error.value)
    assert_same(checkpoint["state_dict"], load_checkpoint(good)["state_dict"])


def test_safetensors_weights_without_checkpoint_header_are_refused(tmp_path: Path) -> None:
    save_file({"w": torch.zeros(2)}, str(tmp_path / "model.ckpt"))
    with pytest.raises(CorruptCheckpointError, match="not a tabrasa training checkpoint"):
        load_checkpoint(tmp_path / "model.ckpt")


def test_values_without_a_safe_encoding_are_named() -> None:
    with pytest.raises(TypeError, match=r"callbacks/cb/when is a .*datetime"):
        save_checkpoint({"callbacks": {"cb": {"when": __import__("datetime").datetime.now()}}}, "/dev/null")


def test_old_torch_checkpoints_load_with_weights_only(tmp_path: Path) -> None:
    torch.save({"state_dict": {"w": torch.ones(2)}, "epoch": 3}, tmp_path / "old.ckpt")
    assert load_checkpoint(tmp_path / "old.ckpt")["epoch"] == 3


class _Exploit:
    def __reduce__(self) -> tuple[object, ...]:
        return (Path.touch, (Path(self.target),))  # type: ignore[attr-defined]


def test_a_pickle_that_would_run_code_is_refused_unopened(tmp_path: Path) -> None:
    exploit = _Exploit()
    exploit.target = str(tmp_path / "pwned")  # type: ignore[attr-defined]
    torch.save({"state_dict": {}, "payload": exploit}, tmp_path / "evil.ckpt")
    with pytest.raises(CorruptCheckpointError, match="weights_only=True"):
        load_checkpoint(tmp_path / "evil.ckpt")
    assert not (tmp_path / "pwned").exists()


# A writer that saves step 1 completely, then stops step 2's save at one known point and says so on stdout;
# the test kills it there (SIGKILL), so every run tears the write at exactly that point.
WRITER = textwrap.dedent(
    """
    import os, sys, torch
    import safetensors.torch
    from pathlib import Path
    from tabrasa.training import safetensors_io
    path, point = Path(sys.argv[1]), sys.argv[2]

    def stop(*args, **kwargs):
        print(point, flush=True)
        sys.stdin.read()  # the test never writes: this waits for the SIGKILL

    def half_then_stop(tensors, filename, metadata=None):
        data = safetensors.torch.save(tensors, metadata=metadata)
        with open(filename, "wb") as handle:
            handle.write(data[: len(data) // 2])
            handle.flush()
            os.fsync(handle.fileno())
        stop()

    def weights(step):
        return {"global_step": step, "state_dict": {"w": torch.full((1000,), float(step))}}

    safetensors_io.save_checkpoint(weights(1), path)
    if point in ("mid-write", "in-place"):
        safetensors_io.save_file = half_then_stop
    if point == "in-place":  # the broken writer of the counter-test: straight over the target
        safetensors_io.atomic_write = lambda target, write: write(target)
    if point == "before-rename":
        os.replace = stop
    if point == "after-rename":
        safetensors_io._fsync_directory = stop
    safetensors_io.save_checkpoint(weights(2), path)
    """
)


def kill_writer_at(point: str, target: Path) -> None:
    """Run WRITER, wait (on its stdout, no timing) until it stands at `point`, and SIGKILL it there."""
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), point],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == point, f"the writer ended before reaching {point}"
    writer.send_signal(signal.SIGKILL)
    assert writer.wait() == -signal.SIGKILL


@pytest.mark.slow
@pytest.mark.parametrize(("point", "step"), [("mid-write", 1), ("before-rename", 1), ("after-rename", 2)])
def test_sigkill_during_a_write_never_leaves_a_torn_checkpoint(tmp_path: Path, point: str, step: int) -> None:
    """Killed with half the new file written, with it complete but not yet renamed, or just after the
    rename: the checkpoint reads whole, as the previous step until the rename and the new one after it."""
    target = tmp_path / "last.ckpt"
    kill_writer_at(point, target)
    partial = tmp_path / ".last.ckpt.partial"
    assert partial.exists() == (point != "after-rename"), "the kill did not land inside the write"
    checkpoint = load_checkpoint(target)
    assert checkpoint["global_step"] == step
    assert torch.equal(checkpoint["state_dict"]["w"], torch.full((1000,), float(step)))
    # A stale temporary file left by the kill is replaced by the next write, and then gone.
    save_checkpoint({"global_step": 3, "state_dict": {"w": torch.zeros(3)}}, target)
    assert load_checkpoint(target)["global_step"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["last.ckpt"]


@pytest.mark.slow
def test_a_writer_killed_in_place_leaves_a_torn_file(tmp_path: Path) -> None:
    """Counter-test: without the temporary file and rename, the same kill leaves half a file, refused."""
    target = tmp_path / "last.ckpt"
    kill_writer_at("in-place", target)
    with pytest.raises(CorruptCheckpointError, match="truncated or corrupt"):
        load_checkpoint(target)


def test_no_code_path_unpickles_or_writes_pickles() -> None:
    """tabrasa's own sources: torch.load only with weights_only=True; no pickle.load, no torch.save."""
    offenders = []
    for path in (ROOT / "tabrasa").rglob("*.py"):
        text = path.read_text()
        for call in re.finditer(r"torch\.load\(([^()]*(\([^()]*\))?[^()]*)\)", text):
            if "weights_only=True" not in call.group(1):
                offenders.append(f"{path.relative_to(ROOT)}: torch.load({call.group(1)})")
        offenders += [
            f"{path.relative_to(ROOT)}: {m}" for m in re.findall(r"pickle\.loads?\(|torch\.save\(", text)
        ]
    assert not offenders, offenders
