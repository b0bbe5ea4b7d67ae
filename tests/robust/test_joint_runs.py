"""A joint run (one backbone, two tasks) under real 2-process DDP and after SIGKILL-and-resume, as the
single-task runs of test_ddp.py and test_resume.py are: ranks end identical, and a killed run resumes to
the uninterrupted run's weights bit for bit (every task's loader position and the task schedule included)."""

from __future__ import annotations

import copy
import signal
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

from tabrasa.training import load_checkpoint
from tests.robust.runs import callback_arg, run_cli, start_cli, wait_for

# IMDB and PSORTb, 64 examples per split and 32 tokens each, a 32-wide backbone: 8 steps an epoch
# (4 batches of 16 per task), 16 steps in all, last.ckpt every 3 steps.
TINY_JOINT = {
    "seed_everything": 0,
    "trainer": {
        "max_epochs": 2,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "deterministic": True,
        "accelerator": "cpu",
    },
    "model": {
        "class_path": "tabrasa.tasks.JointTask",
        "init_args": {
            "backbone": {
                "class_path": "tabrasa.backbone.Encoder",
                "init_args": {"config": {"dim": 32, "depth": 2, "heads": 4, "max_len": 32, "dropout": 0.1}},
            },
            "head_dropout": 0.0,
        },
    },
    "data": {
        "class_path": "tabrasa.data.JointDataModule",
        "init_args": {
            "sampling": "temperature",
            "tasks": {
                "imdb": {
                    "class_path": "tabrasa.data.IMDBDataModule",
                    "init_args": {
                        "limit": 64,
                        "tokenizer": {"class_path": "tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer",
                                      "init_args": {"max_length": 32, "vocab_size": 300}},
                        "loader": {"batch_size": 16, "num_workers": 0},
                    },
                },
                "psortb": {
                    "class_path": "tabrasa.data.PSORTbDataModule",
                    "init_args": {
                        "limit": 64,
                        "tokenizer": {"class_path": "tabrasa.tokenizers.ProteinTokenizer",
                                      "init_args": {"max_length": 32, "truncation": "head"}},
                        "loader": {"batch_size": 16, "num_workers": 0},
                    },
                },
            },
        },
    },
    "test_after_fit": False,
}  # fmt: skip


def joint_fit(folder: Path, *extra: str) -> list[str]:
    config = copy.deepcopy(TINY_JOINT)
    logger = {"class_path": "pytorch_lightning.loggers.CSVLogger", "init_args": {"save_dir": str(folder)}}
    logger["init_args"]["name"] = "joint"  # type: ignore[index]
    config["trainer"]["logger"] = logger  # type: ignore[index]
    path = folder / "joint.yaml"
    path.write_text(yaml.safe_dump(config))
    return ["fit", "--config", str(path), *extra]


def last(folder: Path, version: int) -> dict[str, object]:
    return load_checkpoint(folder / "joint" / f"version_{version}" / "checkpoints" / "last.ckpt")


@pytest.fixture(scope="module")
def uninterrupted(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("joint_reference")
    run_cli(joint_fit(folder, "--checkpoint.every_n_train_steps", "3"))
    return folder


@pytest.mark.slow
def test_killed_joint_run_resumes_to_the_uninterrupted_weights(uninterrupted: Path, tmp_path: Path) -> None:
    marker, log = tmp_path / "paused", tmp_path / "killed.log"
    pause = callback_arg("PauseAtStep", step=12, marker=str(marker))  # epoch 1, 4 of its 8 steps done
    process = start_cli(joint_fit(tmp_path, "--checkpoint.every_n_train_steps", "3", pause), log)
    wait_for(marker, process, log)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL
    killed = last(tmp_path, 0)
    assert killed["global_step"] == 12 and killed["epoch"] == 1
    schedule = killed["loops"]["fit_loop"]["state_dict"]["combined_loader"][0]  # type: ignore[index]
    assert (schedule["epoch"], schedule["step"]) == (1, 4), "the checkpoint is not mid-epoch"

    out = run_cli(joint_fit(tmp_path, "--checkpoint.every_n_train_steps", "3", "--ckpt_path", "last"))
    assert "Restored all states" in out  # not a fresh run, which would also end on these weights
    resumed, reference = last(tmp_path, 1), last(uninterrupted, 0)
    assert resumed["global_step"] == reference["global_step"] == 16
    expected = reference["state_dict"]
    assert resumed["state_dict"].keys() == expected.keys()  # type: ignore[union-attr]
    for name, tensor in expected.items():  # type: ignore[union-attr]
        assert torch.equal(resumed["state_dict"][name], tensor), f"{name} differs after resume"  # type: ignore[index]
    # Counter-check, the comparison can fail: the killed run's step-12 weights are not the finished ones, so
    # a resume that stopped early or replayed the wrong steps would differ.
    stopped = killed["state_dict"]
    assert any(not torch.equal(stopped[k], expected[k]) for k in expected)  # type: ignore[index,union-attr]


@pytest.mark.slow
@pytest.mark.distributed
def test_ddp_joint_ranks_end_identical(cache_dir: Path, tmp_path: Path) -> None:
    ranks = callback_arg("SaveRankWeights", folder=str(tmp_path / "ranks"))
    # Other tasks' embedders and heads take no gradient on a step: DDP must be told (find_unused).
    ddp = ["--trainer.devices", "2", "--trainer.strategy", "ddp_find_unused_parameters_true", ranks]
    run_cli(joint_fit(tmp_path, *ddp), timeout=600)
    rank0, rank1 = (load_file(tmp_path / "ranks" / f"rank{r}.safetensors") for r in (0, 1))
    assert rank0.keys() == rank1.keys() and any(k.startswith("embedders.psortb") for k in rank0)
    for name in rank0:
        assert torch.equal(rank0[name], rank1[name]), name
    # Each rank took 2 batches of 16 per task and epoch: the 8-step epoch of one process became 4 steps.
    assert last(tmp_path, 0)["global_step"] == 8
