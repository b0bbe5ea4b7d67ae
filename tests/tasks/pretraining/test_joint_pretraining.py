"""Joint pretraining: one backbone instance under every task's own masked objective."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tabrasa.errors import UserError
from tabrasa.pretrained.config import PretrainedSource
from tabrasa.tasks import Classifier
from tabrasa.tasks.pretraining import JointPretraining, MaskedPatchModel, MaskedTokenModel
from tabrasa.tasks.pretraining.backbone_export import save_backbone
from tabrasa.tokenizers.image import ImageTokenizer
from tabrasa.tokenizers.text import TextTokenizer
from tests.tasks.pretraining.conftest import CORPUS, encoder

ROOT = Path(__file__).resolve().parents[3]


def images(n: int = 4) -> torch.Tensor:
    return torch.randint(0, 255, (n, 1, 16, 16), dtype=torch.uint8)


@pytest.fixture
def joint(text_tokenizer: TextTokenizer) -> JointPretraining:
    image = ImageTokenizer(patch_size=4, channels=1, image_size=16)
    return JointPretraining(
        {"text": text_tokenizer, "image": image}, encoder(), objectives={"image": {"mask_ratio": 0.5}}
    )


def test_each_modality_gets_its_masked_objective_around_one_backbone(joint: JointPretraining) -> None:
    assert isinstance(joint.objectives["text"], MaskedTokenModel)
    assert isinstance(joint.objectives["image"], MaskedPatchModel)
    assert joint.objectives["image"].mask_ratio == 0.5
    assert all(o.backbone is joint.backbone for o in joint.objectives.values())
    keys = list(joint.state_dict())
    assert any(k.startswith("backbone.") for k in keys)
    assert not any(".backbone." in k for k in keys), "the backbone is stored once, under backbone."
    n_backbone = sum(p.numel() for p in joint.backbone.parameters())
    n_rest = sum(p.numel() for o in joint.objectives.values() for p in o.parameters())
    assert sum(p.numel() for p in joint.parameters()) == n_backbone + n_rest


def test_every_task_trains_the_shared_backbone_and_only_its_own_embedder(
    joint: JointPretraining, text_tokenizer: TextTokenizer
) -> None:
    batches = {
        "text": text_tokenizer.encode_batch(CORPUS[:4]),
        "image": joint.objectives["image"].tokenizer.encode_batch(images()),
    }
    for task, batch in batches.items():
        joint.zero_grad()
        loss = joint._run(task, batch, "train")
        assert torch.isfinite(loss) and loss > 0
        loss.backward()
        assert all(p.grad is not None for p in joint.backbone.parameters() if p.requires_grad)
        other = next(name for name in batches if name != task)
        assert all(p.grad is None for p in joint.objectives[other].embedder.parameters())


def test_a_task_fine_tunes_from_its_export_with_the_joint_backbone(
    joint: JointPretraining, tmp_path: Path
) -> None:
    model = joint.objectives["image"]
    folder = save_backbone(model.backbone, model.embedder, model.tokenizer, tmp_path / "image")
    tokenizer = ImageTokenizer(patch_size=4, channels=1, image_size=16)
    task = Classifier(
        tokenizer, 3, encoder(), pretrained=PretrainedSource(family="tabrasa", path=str(folder))
    )
    task.load_pretrained_weights()
    for (name, mine), theirs in zip(
        task.backbone.state_dict().items(), joint.backbone.state_dict().values(), strict=True
    ):
        assert torch.equal(mine, theirs), name


@pytest.mark.parametrize(
    ("objectives", "message"),
    [
        ({"audio": {}}, r"objectives names tasks \['audio'\]"),
        ({"image": {"kind": "denoising"}}, r"task 'image': objective kind='denoising' is not known"),
        ({"image": {"mask_ratio": 1.5}}, r"task 'image' \(masked_patches\): .*mask_ratio"),
        ({"text": {"kind": "masked_patches"}}, r"task 'text' \(masked_patches\)"),
    ],
)
def test_bad_objective_settings_name_the_task(
    text_tokenizer: TextTokenizer, objectives: dict, message: str
) -> None:
    image = ImageTokenizer(patch_size=4, channels=1, image_size=16)
    with pytest.raises(UserError, match=message):
        JointPretraining({"text": text_tokenizer, "image": image}, encoder(), objectives=objectives)


@pytest.mark.slow
def test_the_joint_pretraining_config_trains_all_four_modalities_exports_each_and_skips_the_test(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tabrasa.training.lightning_cli import build_cli

    monkeypatch.chdir(tmp_path)
    cli = build_cli(
        [
            "fit",
            "--config",
            str(ROOT / "configs" / "pretrain" / "joint.yaml"),
            "--data.init_args.limit",
            "40",
            "--trainer.max_steps",
            "8",
            "--trainer.val_check_interval",
            "4",
            "--trainer.enable_progress_bar",
            "false",
            "--model.init_args.export_dir",
            str(tmp_path / "export"),
        ],
    )  # fmt: skip  (runs `fit` as the command does, its end included)
    logged = cli.trainer.callback_metrics
    tasks = ["text", "image", "audio", "protein"]
    assert cli.model.names == tasks and cli.trainer.global_step == 8
    for task in tasks:
        assert torch.isfinite(logged[f"{task}/val/loss"]), task
    assert torch.isfinite(logged["val/loss_mean"])
    assert {p.name for p in (tmp_path / "export").iterdir()} >= {"text", "image", "protein"}
    card = json.loads((Path(cli.trainer.log_dir) / "run_card.json").read_text())
    assert card["test"] == {} and card["tested_checkpoint"] is None  # no test split: no final test
    assert card["selected_on"]["metric"] == "val/loss_mean"
