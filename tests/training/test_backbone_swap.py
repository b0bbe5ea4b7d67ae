"""A backbone named on the command line replaces the config's, across families (training/backbone_swap.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tabrasa.backbone import Encoder, GAUEncoder, Mamba, ODEEncoder, SequenceCNN
from tabrasa.training import lightning_cli
from tabrasa.training.backbone_swap import with_backbone_resets
from tabrasa.training.lightning_cli import build_cli

ROOT = Path(__file__).resolve().parents[2]
BACKBONES = ROOT / "configs" / "backbone"
# How the merge fails, in one of two ways depending on where the parser meets the old fields first.
MERGE_SYMPTOM = "does not accept option 'heads'|Config file loop detected"


def built(task: str, backbone_args: list[str], tmp_path: Path) -> lightning_cli.TabrasaCLI:
    return build_cli(
        [
            "fit",
            "--config", str(ROOT / "configs" / task),
            *backbone_args,
            "--trainer.default_root_dir", str(tmp_path),
            "--data.limit", "16",
        ],
        run=False,
        save_config=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("task", "backbone", "kind"),
    [
        ("text/imdb.yaml", "mamba.yaml", Mamba),
        ("text/imdb.yaml", "gau.yaml", GAUEncoder),
        ("text/imdb.yaml", "ode.yaml", ODEEncoder),
        ("image/fashion_mnist.yaml", "mamba.yaml", Mamba),
        ("text/imdb_gau.yaml", "mamba.yaml", Mamba),  # one mixer for another
        ("text/imdb_mamba.yaml", "small.yaml", Encoder),  # and back to the transformer
    ],
)
def test_a_mixer_swaps_in_for_any_backbone_and_takes_a_width_override(
    task: str, backbone: str, kind: type, cache_dir: Path, tmp_path: Path
) -> None:
    args = [
        "--model.init_args.backbone", str(BACKBONES / backbone),
        "--model.init_args.backbone.init_args.config.dim", "32",
    ]  # fmt: skip
    model = built(task, args, tmp_path).model
    assert type(model.backbone) is kind and model.backbone.dim == 32


def test_the_short_key_with_an_equals_sign_swaps_too(cache_dir: Path, tmp_path: Path) -> None:
    model = built("text/imdb.yaml", [f"--model.backbone={BACKBONES / 'gau.yaml'}"], tmp_path).model
    assert type(model.backbone) is GAUEncoder


def test_only_whole_backbone_settings_get_the_reset() -> None:
    args = ["--model.init_args.backbone.init_args.config.dim", "32", "--model.backbone_lr", "1"]
    assert with_backbone_resets(args) == args
    swapped = with_backbone_resets(["--model.backbone", "x.yaml"])
    assert swapped[:2] == ["--model.init_args.backbone", swapped[1]] and swapped[2:] == [
        "--model.backbone",
        "x.yaml",
    ]


def test_without_the_reset_the_parser_merges_the_old_config_into_the_new_class(
    monkeypatch: pytest.MonkeyPatch, cache_dir: Path, tmp_path: Path
) -> None:
    """Counter-test: jsonargparse's own behaviour, which the reset exists for. When a jsonargparse release
    discards nested init_args on a class change, this fails and backbone_swap.py can go."""
    monkeypatch.setattr(lightning_cli, "with_backbone_resets", lambda args: args)
    # The merge fails in one of two ways, depending on where the parser meets the old fields first.
    with pytest.raises((Exception, SystemExit), match=MERGE_SYMPTOM):
        built("text/imdb.yaml", ["--model.init_args.backbone", str(BACKBONES / "mamba.yaml")], tmp_path)


def test_a_flat_baseline_still_swaps_in(cache_dir: Path, tmp_path: Path) -> None:
    args = ["--model.init_args.backbone", str(BACKBONES / "sequence_cnn.yaml")]
    assert type(built("text/imdb_mamba.yaml", args, tmp_path).model.backbone) is SequenceCNN


def layered(tmp_path: Path, model: dict) -> str:
    """A second config file that sets only `model` (as a user's own override of a shipped config)."""
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"model": model}))
    return str(path)


@pytest.mark.parametrize(
    "backbone",
    [
        str(BACKBONES / "mamba.yaml"),
        {"class_path": "tabrasa.backbone.Mamba", "init_args": {"config": {"dim": 32}}},
    ],
    ids=["file", "class_path"],
)
def test_a_layered_config_file_swaps_the_backbone_family(
    backbone: str | dict, cache_dir: Path, tmp_path: Path
) -> None:
    override = layered(tmp_path, {"init_args": {"backbone": backbone}})
    model = built("text/imdb.yaml", ["--config", override], tmp_path).model
    assert type(model.backbone) is Mamba


def test_a_layered_file_that_only_tunes_the_backbone_keeps_the_first_files_settings(
    cache_dir: Path, tmp_path: Path
) -> None:
    override = layered(tmp_path, {"init_args": {"backbone": {"init_args": {"config": {"dim": 32}}}}})
    assert with_backbone_resets(["--config", "a.yaml", "--config", override]) == [
        "--config", "a.yaml", "--config", override,
    ]  # fmt: skip
    model = built("text/imdb_mamba.yaml", ["--config", override], tmp_path).model
    assert type(model.backbone) is Mamba and model.backbone.dim == 32 and model.backbone.config.d_state == 16


def test_without_the_reset_a_layered_config_file_merges_too(
    monkeypatch: pytest.MonkeyPatch, cache_dir: Path, tmp_path: Path
) -> None:
    """Counter-test for the layered form: the same jsonargparse merge, reached through a second file."""
    monkeypatch.setattr(lightning_cli, "with_backbone_resets", lambda args: args)
    override = layered(tmp_path, {"init_args": {"backbone": str(BACKBONES / "mamba.yaml")}})
    with pytest.raises((Exception, SystemExit), match=MERGE_SYMPTOM):
        built("text/imdb.yaml", ["--config", override], tmp_path)


@pytest.mark.parametrize(
    "backbone",
    [("mamba.yaml", Mamba), ("gau.yaml", GAUEncoder), ("ode.yaml", ODEEncoder)],
    ids=["mamba", "gau", "ode"],
)
@pytest.mark.parametrize(
    "task",
    [
        # audio/keywords.yaml is left out: building it measures the tokenizer's statistics on generated
        # clips (3 minutes on a fresh cache); the joint config below builds the same audio tokenizer's task.
        "protein/psortb.yaml",
        "joint/four_modalities.yaml",  # one backbone shared by four modalities' tokenizers
        "pretrain/text.yaml",  # masked modelling, which needs a bidirectional mixer (all three are)
        "pretrain/joint.yaml",
    ],
)
def test_every_mixer_swaps_into_the_other_task_configs(
    task: str, backbone: tuple[str, type], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Text and image configs are built above. These parse only (`--print_config`, nothing built): parsing
    is where a swap fails, and building the joint config measures its audio tokenizer (3 minutes)."""
    name, kind = backbone
    capsys.readouterr()
    with pytest.raises(SystemExit):
        build_cli(
            ["fit", "--config", str(ROOT / "configs" / task), "--model.init_args.backbone",
             str(BACKBONES / name), "--trainer.default_root_dir", str(tmp_path), "--print_config"],
            run=False,
            save_config=False,
        )  # fmt: skip
    printed = yaml.safe_load(capsys.readouterr().out)["model"]["init_args"]["backbone"]
    assert printed["class_path"] == f"tabrasa.backbone.{kind.__qualname__}"
