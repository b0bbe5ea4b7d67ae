"""A joint training checkpoint → `tabrasa convert --family checkpoint` → a single-task fine-tune's start:
backbone, embedder and head come back equal, and the single-task model computes what the joint one did,
for a text task (its vocabulary file travels) and a protein task (a spec with no file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from tabrasa.backbone import Encoder
from tabrasa.backbone.config import EncoderConfig
from tabrasa.cli.convert import main as convert_main
from tabrasa.deploy.run_to_pretrained import convert_run
from tabrasa.errors import UserError
from tabrasa.pretrained import PretrainedSource, load_into, load_pretrained
from tabrasa.tasks.heads import LinearHead
from tabrasa.tokenizers.protein import ProteinTokenizer
from tabrasa.training import save_checkpoint
from tabrasa.training.lightning_cli import build_cli

BACKBONE = {"class_path": "tabrasa.backbone.Encoder",
            "init_args": {"config": {"dim": 32, "depth": 2, "heads": 4, "max_len": 32}}}  # fmt: skip
IMDB = {
    "limit": 32, "loader": {"batch_size": 8, "num_workers": 0},
    "tokenizer": {"class_path": "tabrasa.tokenizers.learned_vocabulary.SubwordTokenizer",
                  "init_args": {"max_length": 32, "vocab_size": 200}},
}  # fmt: skip
FASHION = {
    "limit": 32, "val_size": 8, "loader": {"batch_size": 8, "num_workers": 0},
    "tokenizer": {"class_path": "tabrasa.tokenizers.ImageTokenizer",
                  "init_args": {"patch_size": 7, "channels": 1, "image_size": 28, "mean": 0.3, "std": 0.35}},
}  # fmt: skip
PROTEINS = {
    "limit": 32, "loader": {"batch_size": 8, "num_workers": 0},
    "tokenizer": {"class_path": "tabrasa.tokenizers.ProteinTokenizer",
                  "init_args": {"max_length": 32, "truncation": "head_tail", "unknown": "x"}},
}  # fmt: skip
QUIET = ["--trainer.logger", "false", "--trainer.enable_progress_bar", "false"]


def _write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"seed_everything": 0, "trainer": {"accelerator": "cpu"}, **config}))
    return path


@pytest.fixture(scope="module")
def joint_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, Path]:
    """A JointTask (IMDB text, Fashion-MNIST images, PSORTb proteins; task embedding on) with random
    weights, saved as `tabrasa fit` saves its checkpoints, and the config that built it."""
    folder = tmp_path_factory.mktemp("joint_run")
    config = _write(folder / "config.yaml", {
        "model": {"class_path": "tabrasa.tasks.JointTask",
                  "init_args": {"backbone": BACKBONE, "task_embedding": True}},
        "data": {"class_path": "tabrasa.data.JointDataModule", "init_args": {"tasks": {
            "imdb": {"class_path": "tabrasa.data.IMDBDataModule", "init_args": IMDB},
            "fashion": {"class_path": "tabrasa.data.FashionMNISTDataModule", "init_args": FASHION},
            "proteins": {"class_path": "tabrasa.data.PSORTbDataModule", "init_args": PROTEINS},
        }}},
    })  # fmt: skip
    model = build_cli(["fit", "--config", str(config), *QUIET], run=False, save_config=False).model
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))  # nothing left at its initial value, so no mix-up can hide
    checkpoint = folder / "best.ckpt"
    save_checkpoint({"state_dict": model.state_dict(), "epoch": 1}, checkpoint)
    return model.eval(), checkpoint, config


def _single_imdb(folder: Path, out: Path, load_head: bool = True) -> Any:
    config = _write(folder / "imdb.yaml", {
        "model": {"class_path": "tabrasa.tasks.Classifier", "init_args": {
            "backbone": BACKBONE,
            "pretrained": {"family": "tabrasa", "path": str(out), "load_head": load_head}}},
        "data": {"class_path": "tabrasa.data.IMDBDataModule", "init_args": {
            **IMDB, "tokenizer": {"class_path": "tabrasa.pretrained.tokenizer.PretrainedTokenizer",
                                  "init_args": {"family": "tabrasa", "path": str(out)}}}},
    })  # fmt: skip
    return build_cli(["fit", "--config", str(config), *QUIET], run=False, save_config=False)


def test_a_joint_task_converts_into_a_single_task_start(
    joint_run: tuple[Any, Path, Path], tmp_path: Path
) -> None:
    joint, checkpoint, config = joint_run
    out = tmp_path / "imdb"
    args = ["--family", "checkpoint", "--source", str(checkpoint), "--config", str(config), "--task", "imdb"]
    assert convert_main([*args, "--out", str(out)]) == 0
    assert {"model.safetensors", "tabrasa.json", "tokenizer.json", "head.safetensors"} <= {
        p.name for p in out.iterdir()
    }

    cli = _single_imdb(tmp_path, out)
    single = cli.model.eval()
    single.load_pretrained_weights()
    for name, tensor in joint.embedders["imdb"].state_dict().items():
        assert torch.equal(single.embedder.state_dict()[name], tensor), name
    for name, tensor in joint.heads["imdb"].state_dict().items():
        assert torch.equal(single.head.state_dict()[name], tensor), name
    vector = joint.task_embed.weight[joint.names.index("imdb")]
    for name, tensor in joint.backbone.state_dict().items():
        expected = tensor + vector if name == "positions.weight" else tensor  # the task vector folded in
        assert torch.equal(single.backbone.state_dict()[name], expected), name

    batch = cli.datamodule.tokenizer.encode_batch(["a fine film", "dull and far too long for its story"])
    with torch.no_grad():
        expected = joint.heads["imdb"](joint.features("imdb", batch))
        got = single(batch)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


def test_a_protein_task_converts_into_a_single_task_start(
    joint_run: tuple[Any, Path, Path], tmp_path: Path
) -> None:
    """The protein tokenizer is stored as a spec alone (no file), its settings (max_length, truncation,
    unknown) included, and the single-task model computes what the joint one did."""
    joint, checkpoint, config = joint_run
    out = convert_run(checkpoint, config, tmp_path / "proteins", task="proteins")
    stored = load_pretrained("tabrasa", str(out)).tokenizer
    assert type(stored) is ProteinTokenizer
    assert (stored.max_length, stored.truncation, stored.unknown) == (32, "head_tail", "x")

    # The protein data modules take a ProteinTokenizer, so the config states the same one.
    single_config = _write(tmp_path / "proteins.yaml", {
        "model": {"class_path": "tabrasa.tasks.Classifier", "init_args": {
            "backbone": BACKBONE, "pretrained": {"family": "tabrasa", "path": str(out), "load_head": True}}},
        "data": {"class_path": "tabrasa.data.PSORTbDataModule", "init_args": PROTEINS},
    })  # fmt: skip
    cli = build_cli(["fit", "--config", str(single_config), *QUIET], run=False, save_config=False)
    assert cli.datamodule.tokenizer.to_spec() == stored.to_spec()
    single = cli.model.eval()
    single.load_pretrained_weights()

    sequences = ["MKTAYJAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAV", "mkkll*"]
    batch = stored.collate([stored.encode(s) for s in sequences])
    with torch.no_grad():
        expected = joint.heads["proteins"](joint.features("proteins", batch))
        got = single(batch)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


def test_a_task_the_checkpoint_lacks_lists_its_tasks(
    joint_run: tuple[Any, Path, Path], tmp_path: Path
) -> None:
    _, checkpoint, config = joint_run
    with pytest.raises(UserError, match=r"'psortb' is not a task .*\['fashion', 'imdb', 'proteins'\]"):
        convert_run(checkpoint, config, tmp_path / "out", task="psortb")
    with pytest.raises(UserError, match="choose one with --task"):
        convert_run(checkpoint, config, tmp_path / "out")


def test_a_head_of_another_size_names_both_outputs(joint_run: tuple[Any, Path, Path], tmp_path: Path) -> None:
    _, checkpoint, config = joint_run
    out = convert_run(checkpoint, config, tmp_path / "fashion", task="fashion")
    backbone = Encoder(EncoderConfig(dim=32, depth=2, heads=4, max_len=32))
    source = PretrainedSource("tabrasa", str(out), load_embedder=False, load_head=True)
    with pytest.raises(UserError, match=r"10 outputs.*\(3 outputs, num_outputs"):
        load_into(source, backbone, None, LinearHead(32, 3))
