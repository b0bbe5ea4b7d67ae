"""Several machines: two "nodes" of one process each on localhost train to the weights of one node with two
processes, launched the ways docs/scaling-out.md shows (Lightning's own launcher reading MASTER_ADDR,
MASTER_PORT, NODE_RANK; torchrun); and Lightning finds the ranks SLURM sets, for the sbatch template."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from lightning_fabric.plugins.environments import LightningEnvironment, SLURMEnvironment

from tabrasa.training.lightning_cli import build_cli
from tests.robust.runs import LAUNCH_VARIABLES, ROOT, child_env, last_checkpoint, tiny_fit
from tests.robust.shared_runs import DDP, TWO_RANKS, ddp_two_ranks, shared_cache

# The SLURM tests build a Trainer from this config in-process (nothing trains): IMDB, 64 examples, 32 tokens,
# a 32-wide 2-layer backbone, 2 ranks × batch 8.
TINY_CONFIG = {
    "seed_everything": 0,
    "trainer": {
        "accelerator": "cpu",
        "max_epochs": 2,
        "deterministic": True,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "strategy": "ddp",
    },
    "model": {
        "class_path": "tabrasa.tasks.Classifier",
        "init_args": {
            "backbone": {
                "class_path": "tabrasa.backbone.Encoder",
                "init_args": {"config": {"dim": 32, "depth": 2, "heads": 4, "max_len": 32, "dropout": 0.1}},
            },
            "optimizer": {"lr": 0.001},
        },
    },
    "data": {
        "class_path": "tabrasa.data.IMDBDataModule",
        "init_args": {
            "limit": 64,
            "tokenizer": {
                "class_path": "tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer",
                "init_args": {"max_length": 32, "vocab_size": 300},
            },
            "loader": {"batch_size": 8, "num_workers": 0},
        },
    },
}
TIMEOUT = 300


def write_config(folder: Path) -> Path:
    """The tiny run's config, with its logger writing under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    logger = {
        "class_path": "pytorch_lightning.loggers.CSVLogger",
        "init_args": {"save_dir": str(folder), "name": "tiny"},
    }
    config = {
        **TINY_CONFIG,
        "trainer": {**TINY_CONFIG["trainer"], "logger": logger, "default_root_dir": str(folder)},
    }
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def node_fit(save_dir: Path) -> list[str]:
    """One node's `tabrasa fit`: the shared two-rank DDP reference's settings, as 2 nodes × 1 process."""
    nodes = ["--trainer.num_nodes", "2", "--trainer.devices", "1"]
    return ["-m", "tabrasa.cli", *tiny_fit(save_dir, *TWO_RANKS, *DDP, *nodes)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_nodes(commands: list[list[str]], envs: list[dict[str, str]], logs: Path) -> None:
    """Start every node's command at once (they rendezvous), then wait for all of them."""
    logs.mkdir(parents=True, exist_ok=True)
    handles = [open(logs / f"node{i}.log", "wb") for i in range(len(commands))]  # noqa: SIM115
    nodes = [
        subprocess.Popen(c, cwd=ROOT, env=e, stdout=h, stderr=subprocess.STDOUT)
        for c, e, h in zip(commands, envs, handles, strict=True)
    ]
    try:
        codes = [node.wait(timeout=TIMEOUT) for node in nodes]
    finally:
        for node in nodes:
            node.kill()
        for handle in handles:
            handle.close()
    for i, code in enumerate(codes):
        assert code == 0, f"node {i} failed:\n{(logs / f'node{i}.log').read_text()[-4000:]}"


def weights(save_dir: Path) -> dict[str, torch.Tensor]:
    checkpoint = last_checkpoint(save_dir)
    assert checkpoint["global_step"] == 12
    return checkpoint["state_dict"]


@pytest.mark.slow
@pytest.mark.distributed
@pytest.mark.parametrize("launcher", ["lightning", "torchrun"])
def test_two_nodes_train_like_one_node_with_two_processes(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, launcher: str
) -> None:
    # One node, two processes (Lightning starts the second), shared with the FSDP2 tests. It also fills the
    # shared data cache, so the nodes below, which each prepare data as their node's local rank 0, find it
    # built and do not race to write it.
    one_node = weights(ddp_two_ranks(tmp_path_factory))
    port, cache = str(free_port()), str(shared_cache(tmp_path_factory))
    if launcher == "lightning":
        # What Lightning's LightningEnvironment reads on each machine; it starts `devices` processes per node.
        commands = [[sys.executable, *node_fit(tmp_path)]] * 2
        envs = [
            child_env(
                MASTER_ADDR="127.0.0.1",
                MASTER_PORT=port,
                NODE_RANK=str(rank),
                WORLD_SIZE="2",
                TABRASA_CACHE=cache,
            )
            for rank in (0, 1)
        ]
    else:
        # The torchrun recipe of docs/scaling-out.md: torchrun starts the processes, Lightning reads its
        # variables (TorchElasticEnvironment).
        commands = [
            [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "1",
             "--node_rank", str(rank), "--master_addr", "127.0.0.1", "--master_port", port,
             *node_fit(tmp_path)]
            for rank in (0, 1)
        ]  # fmt: skip
        envs = [child_env(TABRASA_CACHE=cache)] * 2
    run_nodes(commands, envs, tmp_path / "logs")
    two_nodes = weights(tmp_path)
    assert two_nodes.keys() == one_node.keys()
    for name, tensor in one_node.items():
        # Same ranks, same data shares, same gloo all-reduce of two gradients: not merely close, equal.
        assert torch.equal(two_nodes[name], tensor), f"{name} differs between 2 nodes × 1 and 1 node × 2"


SLURM = {
    "SLURM_NTASKS": "4",
    "SLURM_NTASKS_PER_NODE": "2",
    "SLURM_NNODES": "2",
    "SLURM_JOB_NAME": "tabrasa-imdb",
    "SLURM_JOB_ID": "424242",
    "SLURM_NODELIST": "gpu[017-018]",
    "SLURM_PROCID": "3",
    "SLURM_LOCALID": "1",
    "SLURM_NODEID": "1",
}


def slurm_trainer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, devices: int = 2, **overrides: str
) -> object:
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in {**SLURM, **overrides}.items():
        monkeypatch.setenv(name, value)
    cluster = ["--trainer.num_nodes", "2", "--trainer.devices", str(devices)]
    # Not deterministic: that would switch torch's deterministic mode on for the whole test process.
    args = ["--config", str(write_config(tmp_path)), *cluster, "--trainer.deterministic", "false"]
    # Building the Trainer reads the cluster; nothing is launched or trained.
    return build_cli(args, run=False, save_config=False).trainer


def test_slurm_tasks_become_lightning_ranks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    trainer = slurm_trainer(monkeypatch, tmp_path)
    environment = trainer.strategy.cluster_environment
    assert isinstance(environment, SLURMEnvironment)
    assert (trainer.world_size, trainer.global_rank, trainer.local_rank, trainer.node_rank) == (4, 3, 1, 1)
    assert trainer.num_nodes == 2 and trainer.num_devices == 2
    assert environment.main_address == "gpu017"  # the first host of the node list
    assert environment.main_port == 15000 + 4242  # from the job id, the same on every task
    # What `fit` calls first: SLURM started the processes, so the launcher only checks and runs the function.
    assert trainer.strategy.launcher.launch(lambda: "ran", trainer=trainer) == "ran"


def test_an_interactive_slurm_shell_is_not_taken_for_a_job(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Counter-test: the same variables under `srun --job-name=interactive` (or bash) are not detected."""
    trainer = slurm_trainer(monkeypatch, tmp_path, SLURM_JOB_NAME="interactive")
    environment = trainer.strategy.cluster_environment
    assert isinstance(environment, LightningEnvironment) and not isinstance(environment, SLURMEnvironment)
    assert trainer.global_rank == 0


def test_devices_that_disagree_with_the_slurm_tasks_per_node_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Counter-test: Lightning checks SLURM's numbers against the Trainer's when `fit` launches."""
    trainer = slurm_trainer(monkeypatch, tmp_path, devices=1)
    with pytest.raises(ValueError, match="ntasks-per-node=2"):
        trainer.strategy.launcher.launch(lambda: "ran", trainer=trainer)


def test_the_sbatch_template_is_valid_bash_and_launches_with_srun() -> None:
    template = ROOT / "scripts" / "slurm" / "train.sbatch"
    subprocess.run(["bash", "-n", str(template)], check=True)
    text = template.read_text()
    assert "#SBATCH --ntasks-per-node" in text and "srun" in text
    assert "--trainer.num_nodes" in text and "--trainer.devices" in text
