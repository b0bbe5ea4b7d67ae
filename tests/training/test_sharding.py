"""Sharded training: FSDP2 trains on two CPU processes (gloo) like DDP and resumes bit-exactly from sharded
and from full checkpoints; FSDP (torch's FSDP1) is refused on CPU in one line before anything trains.

What was found: FSDP1 cannot run on CPU at all (Lightning refuses `fsdp` with a CPU accelerator; a subclass
of its strategy gets past that check and then torch refuses: "FSDP needs a non-CPU accelerator device, but
no accelerator device is detected."). FSDP2 (`fully_shard` under Lightning's ModelParallelStrategy) runs
on gloo with two CPU processes, which the tests below train.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

from tabrasa.backbone import (
    Encoder,
    EncoderConfig,
    GAUConfig,
    GAUEncoder,
    Mamba,
    MambaConfig,
    SequenceCNN,
    SequenceLSTM,
)
from tabrasa.backbone.block import Block
from tabrasa.errors import UserError
from tabrasa.tasks import Classifier
from tabrasa.tokenizers import ProteinTokenizer
from tabrasa.training import load_checkpoint
from tabrasa.training.peak_memory import PeakMemory
from tabrasa.training.sharded_checkpoint import (
    consolidate_checkpoint,
    read_training_checkpoint,
    rng_state_globals,
)
from tabrasa.training.sharding import (
    FSDP2_NAME,
    FSDP_NAME,
    SHARD_UNITS,
    FSDP2Strategy,
    TabrasaFSDPStrategy,
    check_sharding_supported,
    reads_checkpoints_itself,
    shard_blocks,
)
from tests.robust.runs import (
    ROOT,
    callback_arg,
    child_env,
    metrics,
    run_cli,
    tiny_fit,
    version_dir,
    wait_for,
)
from tests.robust.shared_runs import TWO_RANKS, ddp_two_ranks
from tests.robust.test_ddp import initial_weights

FULL = json.dumps(
    {
        "class_path": "tabrasa.training.sharding.FSDP2Strategy",
        "init_args": {"save_distributed_checkpoint": False},
    }
)
# Both strategies average the two ranks' gradients (DDP: all-reduce, FSDP2: reduce-scatter); what differs is
# summation order inside the collectives and AdamW's division by sqrt(v) (see tests/robust/test_ddp.py).
TOLERANCE = {"atol": 1e-4, "rtol": 1e-3}


def strategy(name: str) -> list[str]:
    return ["--trainer.strategy", name]


@pytest.fixture(scope="module")
def runs(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Uninterrupted two-process runs (dropout 0.1 as configured): DDP, shared with the two-node tests, and
    FSDP2 with sharded checkpoints."""
    root = tmp_path_factory.mktemp("sharding")
    run_cli(tiny_fit(root / "fsdp2", *TWO_RANKS, *strategy(FSDP2_NAME)))
    return {"ddp": ddp_two_ranks(tmp_path_factory), "fsdp2": root / "fsdp2"}


def last(save_dir: Path, version: int = 0) -> Path:
    return version_dir(save_dir, version) / "checkpoints" / "last.ckpt"


@pytest.mark.slow
@pytest.mark.distributed
def test_fsdp2_on_two_cpu_processes_matches_ddp(runs: dict[str, Path]) -> None:
    sharded = last(runs["fsdp2"])
    assert sharded.is_dir() and {p.name for p in sharded.glob("*.distcp")} == {"__0_0.distcp", "__1_0.distcp"}
    fsdp2, ddp = read_training_checkpoint(sharded), load_checkpoint(last(runs["ddp"]))
    assert fsdp2["global_step"] == ddp["global_step"] == 12
    initial = initial_weights()  # seed 0, the same construction as both runs
    assert fsdp2["state_dict"].keys() == ddp["state_dict"].keys()
    moved = 0
    for name, tensor in ddp["state_dict"].items():
        torch.testing.assert_close(
            fsdp2["state_dict"][name], tensor, **TOLERANCE, msg=lambda m, n=name: f"{n}: {m}"
        )
        moved += int(not torch.allclose(tensor, initial[name], **TOLERANCE))
    assert moved > len(initial) // 2, "training barely moved the weights: the comparison would prove nothing"
    for key in ("train/loss", "val/loss", "val/acc"):
        ours, theirs = logged(runs["fsdp2"], key), logged(runs["ddp"], key)
        assert len(ours) == len(theirs) > 0
        torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), atol=1e-4, rtol=1e-4)


@pytest.mark.slow
@pytest.mark.distributed
@pytest.mark.parametrize("checkpoints", ["sharded", "full"])
def test_a_killed_fsdp2_run_resumes_bit_exact(
    runs: dict[str, Path], tmp_path: Path, checkpoints: str
) -> None:
    """SIGKILL both ranks mid-epoch after step 6; `--ckpt_path last` ends on the uninterrupted weights."""
    name = FSDP2_NAME if checkpoints == "sharded" else FULL
    save_dir, marker, log = tmp_path / "runs", tmp_path / "paused", tmp_path / "killed.log"
    pause = callback_arg("PauseAtStep", step=6, marker=str(marker))
    process = start_group(tiny_fit(save_dir, *TWO_RANKS, *strategy(name), pause), log)
    try:
        wait_for(marker, process, log)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # both ranks: the launcher's child is in its process group
        process.wait(timeout=30)
    written = last(save_dir)
    assert written.is_dir() == (checkpoints == "sharded")
    killed = read_training_checkpoint(written)
    assert (killed["global_step"], killed["epoch"]) == (6, 1)

    out = run_cli(tiny_fit(save_dir, *TWO_RANKS, *strategy(name), "--ckpt_path", "last"))
    assert "Restored all states" in out
    resumed = read_training_checkpoint(last(save_dir, version=1))
    uninterrupted = read_training_checkpoint(last(runs["fsdp2"]))
    assert resumed["global_step"] == 12
    assert resumed["state_dict"].keys() == uninterrupted["state_dict"].keys()
    for key, tensor in uninterrupted["state_dict"].items():
        assert torch.equal(resumed["state_dict"][key], tensor), f"{key} differs after resume"


@pytest.mark.slow
@pytest.mark.distributed
def test_a_sharded_checkpoint_consolidates_to_safetensors(runs: dict[str, Path], tmp_path: Path) -> None:
    target = consolidate_checkpoint(last(runs["fsdp2"]), tmp_path / "last.ckpt")
    assert target.read_bytes()[:4] != b"PK\x03\x04"  # safetensors, not a torch.save zip
    full, gathered = load_checkpoint(target), read_training_checkpoint(last(runs["fsdp2"]))
    assert full["global_step"] == 12 and "optimizer_states" not in full
    for key, tensor in gathered["state_dict"].items():
        assert torch.equal(full["state_dict"][key], tensor), key


@pytest.mark.slow
def test_fsdp_on_cpu_is_one_line_before_training(cache_dir: Path, tmp_path: Path) -> None:
    args = tiny_fit(tmp_path, "--trainer.accelerator", "cpu", "--trainer.devices", "1", *strategy(FSDP_NAME))
    out = subprocess.run(
        [sys.executable, "-m", "tabrasa.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 2, out.stderr[-3000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("tabrasa: error:")]
    assert len(errors) == 1 and "Traceback" not in out.stderr
    assert "runs on CUDA devices only" in errors[0] and "--trainer.strategy ddp" in errors[0]
    assert not list(tmp_path.rglob("*.ckpt")), "a checkpoint was written: the refusal came after training"


def test_lightning_fsdp_names_are_refused_on_cpu_and_accepted_on_cuda() -> None:
    for name in ("fsdp", "fsdp_cpu_offload", FSDP_NAME):
        with pytest.raises(UserError, match=f"--trainer.strategy {name} runs on CUDA devices only.*ddp"):
            check_sharding_supported(name, "cpu")
        check_sharding_supported(name, "gpu")
        check_sharding_supported(name, "cuda")
    with pytest.raises(UserError, match="TabrasaFSDPStrategy runs on CUDA"):
        check_sharding_supported(TabrasaFSDPStrategy(), "cpu")
    for fine in ("ddp", "auto", FSDP2_NAME):
        check_sharding_supported(fine, "cpu")  # counter-test: what runs on CPU is not refused
    check_sharding_supported(FSDP2Strategy(), "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(UserError):
            check_sharding_supported("fsdp", "auto")


def test_fsdp_wraps_and_checkpoints_each_block() -> None:
    wrapped = TabrasaFSDPStrategy(activation_checkpointing=True)
    assert wrapped.kwargs["auto_wrap_policy"]._module_classes == set(SHARD_UNITS)
    assert wrapped._activation_checkpointing_kwargs["auto_wrap_policy"]._module_classes == set(SHARD_UNITS)
    assert Block in SHARD_UNITS
    plain = TabrasaFSDPStrategy()
    assert "auto_wrap_policy" not in plain._activation_checkpointing_kwargs


def test_strategy_names_are_registered() -> None:
    from pytorch_lightning.strategies import StrategyRegistry

    assert isinstance(StrategyRegistry.get(FSDP2_NAME), FSDP2Strategy)
    assert isinstance(StrategyRegistry.get(FSDP_NAME), TabrasaFSDPStrategy)


def test_numpy_rng_states_load_only_inside_the_allowlist(tmp_path: Path) -> None:
    path = tmp_path / "meta.pt"
    torch.save({"numpy": np.random.get_state()[1], "step": 3}, path)
    with pytest.raises(Exception, match="Weights only load failed"):
        torch.load(path, weights_only=True)
    with rng_state_globals():
        assert torch.load(path, weights_only=True)["step"] == 3
    torch.save({"code": subprocess.Popen}, path)  # anything beyond numpy arrays stays refused
    with rng_state_globals(), pytest.raises(Exception, match="Weights only load failed"):
        torch.load(path, weights_only=True)


def tiny_classifier(backbone: torch.nn.Module | None = None) -> tuple[Classifier, dict[str, torch.Tensor]]:
    tokenizer = ProteinTokenizer(max_length=8)
    encoder = Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=8, dropout=0.0))
    model = Classifier(tokenizer, 2, backbone or encoder)
    items = [{**tokenizer(seq), "label": torch.tensor(i % 2)} for i, seq in enumerate(["MKV", "MKVLA", "AC"])]
    return model, tokenizer.collate(items)


@pytest.fixture
def one_rank() -> object:
    """A one-process gloo group and its mesh: fully_shard works on one rank as on N."""
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield init_device_mesh("cpu", (1, 1), mesh_dim_names=("data_parallel", "tensor_parallel"))
    finally:
        dist.destroy_process_group()


BACKBONES = {
    "transformer": lambda: Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=8, dropout=0.0)),
    "gau": lambda: GAUEncoder(GAUConfig(dim=32, depth=2, max_len=8, dropout=0.0)),
    "mamba": lambda: Mamba(MambaConfig(dim=32, depth=2)),
    "sequence_cnn": lambda: SequenceCNN(dim=32, blocks=2, kernel_size=3, dropout=0.0),
}


@pytest.mark.parametrize("kind", sorted(BACKBONES))
def test_shard_blocks_shards_every_layer_and_keeps_outputs(one_rank: object, kind: str) -> None:
    from torch.distributed.fsdp import FSDPModule
    from torch.distributed.tensor import DTensor

    model, batch = tiny_classifier(BACKBONES[kind]())
    model.eval()
    expected = model(batch)
    shard_blocks(model)  # no mesh on the module yet: a no-op (DDP and single-device runs)
    assert not any(isinstance(p, DTensor) for p in model.parameters())
    model._device_mesh = one_rank
    model.configure_model()
    units = [m for m in model.backbone.modules() if isinstance(m, SHARD_UNITS)]
    assert len(units) == 2 and all(isinstance(u, FSDPModule) for u in units) and isinstance(model, FSDPModule)
    assert all(isinstance(p, DTensor) for p in model.parameters())
    model.configure_model()  # Lightning calls it again for `test` after `fit`: nothing changes
    torch.testing.assert_close(model(batch), expected)


def test_shard_blocks_refuses_a_backbone_without_blocks(one_rank: object) -> None:
    model, _ = tiny_classifier(SequenceLSTM(dim=32, layers=1, dropout=0.0))
    model._device_mesh = one_rank
    with pytest.raises(UserError, match=r"no block to shard.*--trainer.strategy ddp"):
        model.configure_model()


def logged(save_dir: Path, key: str) -> list[float]:
    return [float(row[key]) for row in metrics(save_dir) if row.get(key)]


def start_group(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    """`tabrasa` in its own process group, so one killpg reaches the launcher and the rank it started."""
    handle = open(log, "wb")  # noqa: SIM115 (the child holds it; the test reads the file after)
    return subprocess.Popen(
        [sys.executable, "-m", "tabrasa.cli", *args],
        cwd=ROOT,
        env=child_env(),
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_peak_memory_writes_every_ranks_report(tmp_path: Path) -> None:
    callback = PeakMemory(str(tmp_path), warmup_steps=2)
    module = SimpleNamespace(device=torch.device("cpu"))
    trainer = SimpleNamespace(
        global_rank=1, world_size=2, global_step=0, strategy=FSDP2Strategy(), precision="32"
    )
    callback.on_train_start(trainer, module)
    for step in range(1, 7):
        trainer.global_step = step
        callback.on_train_batch_end(trainer, module, None, None, step - 1)
    callback.on_train_end(trainer, module)
    report = json.loads((tmp_path / "rank1.json").read_text())
    assert (report["rank"], report["world_size"], report["strategy"]) == (1, 2, "FSDP2Strategy")
    assert report["steps"] == 6 and report["timed_steps"] == 4 and report["seconds_per_step"] >= 0
    assert report["peak_allocated_bytes"] is None  # CUDA memory only; on CPU there is none to report


SCRIPT = ROOT / "scripts" / "gpu_sharding.py"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine without CUDA")
def test_gpu_sharding_script_refuses_a_machine_without_cuda(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path / "sharding.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [out.stderr.strip()] and "no CUDA device" in out.stderr
    assert not (tmp_path / "sharding.json").exists()


@pytest.mark.slow
@pytest.mark.distributed
def test_gpu_sharding_script_runs_end_to_end_on_cpu(cache_dir: Path, tmp_path: Path) -> None:
    """--tiny: FSDP2 on two gloo processes, each rank's report gathered into one JSON. One arm: every arm
    runs through the same loop, and DDP against FSDP2 on two processes is test_fsdp2_on_two_cpu_processes_
    matches_ddp's; the second arm cost the suite 30 s and checked nothing more."""
    target = tmp_path / "sharding.json"
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--tiny", "--arms", "fsdp2", "--out", str(target)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(target.read_text())
    assert set(report["arms"]) == {"fsdp2"} and report["devices"] == 2
    for arm in report["arms"].values():
        assert [r["rank"] for r in arm["ranks"]] == [0, 1]
        assert all(r["steps"] == 6 and r["timed_steps"] == 4 for r in arm["ranks"])
        assert arm["seconds_per_step"] > 0 and arm["peak_allocated_gib_max"] is None
    assert report["arms"]["fsdp2"]["ranks"][0]["strategy"] == "FSDP2Strategy"


def test_strategies_that_read_their_own_checkpoints_are_recognised() -> None:
    from pytorch_lightning.strategies import DDPStrategy

    for name in ("fsdp", FSDP_NAME, FSDP2_NAME):
        assert reads_checkpoints_itself(name)
    assert reads_checkpoints_itself(FSDP2Strategy()) and reads_checkpoints_itself(TabrasaFSDPStrategy())
    for other in ("ddp", "auto", "no_such_strategy", DDPStrategy()):
        assert not reads_checkpoints_itself(other)  # counter-test: DDP keeps the safetensors plugin


def test_full_checkpoints_refuse_the_safetensors_plugin() -> None:
    from tabrasa.training.safetensors_io import SafetensorsCheckpointIO
    from tabrasa.training.sharding import check_checkpoint_io

    full = FSDP2Strategy(save_distributed_checkpoint=False)
    full.checkpoint_io = SafetensorsCheckpointIO()
    with pytest.raises(UserError, match="cannot use SafetensorsCheckpointIO"):
        check_checkpoint_io(full, full=True)
    check_checkpoint_io(full, full=False)  # counter-test: sharded checkpoints never go through the plugin
    check_checkpoint_io(FSDP2Strategy(save_distributed_checkpoint=False), full=True)  # Lightning's torch IO


def test_joint_and_pretraining_tasks_shard_their_blocks_and_keep_outputs(one_rank: object) -> None:
    from torch.distributed.fsdp import FSDPModule
    from torch.distributed.tensor import DTensor

    from tabrasa.tasks.joint import JointTask
    from tabrasa.tasks.pretraining.mlm import MaskedTokenModel
    from tabrasa.tokenizers.esm import EsmProteinTokenizer

    def encoder() -> Encoder:
        return Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=12, dropout=0.0))

    proteins = EsmProteinTokenizer(max_length=12)
    batch = proteins.collate([proteins(seq) for seq in ["MKVL", "ACDEFG", "MK"]])
    joint = JointTask({"a": ProteinTokenizer(max_length=12), "b": proteins}, {"a": 2, "b": 3}, encoder())
    mlm = MaskedTokenModel(proteins, encoder())
    runs = {"joint": (joint, lambda m: m("b", batch)), "mlm": (mlm, lambda m: m.logits(batch))}
    for name, (model, forward) in runs.items():
        model.eval()
        expected = forward(model)
        model._device_mesh = one_rank
        model.configure_model()
        units = [m for m in model.backbone.modules() if isinstance(m, SHARD_UNITS)]
        assert len(units) == 2 and all(isinstance(u, FSDPModule) for u in units), name
        assert all(isinstance(p, DTensor) for p in model.parameters()), name
        torch.testing.assert_close(forward(model), expected, msg=name)


def test_counter_a_pretraining_export_under_fsdp2_is_refused_before_training(
    one_rank: object, tmp_path: Path
) -> None:
    from tabrasa.tasks.pretraining.mlm import MaskedTokenModel
    from tabrasa.tokenizers.esm import EsmProteinTokenizer

    model = MaskedTokenModel(
        EsmProteinTokenizer(max_length=12),
        Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=12, dropout=0.0)),
        export_dir=str(tmp_path / "export"),
    )
    model._device_mesh = one_rank
    with pytest.raises(UserError, match=r"export_dir=.*needs whole weights.*--trainer.strategy ddp"):
        model.configure_model()
