"""`tabrasa data list|prepare`: the registry, preparing from a name or a config, and missing sources."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tabrasa.cli import main as tabrasa_main
from tabrasa.cli.data import data_module_from, main
from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.registry import DATASETS
from tests.data.test_psortb import write_fake_psortb

ROOT = Path(__file__).resolve().parents[2]


def test_registry_is_a_plain_dict_of_data_modules_and_their_presets() -> None:
    assert {"fashion_mnist", "psortb", "uniprot_localisation", "imdb"} <= set(DATASETS)
    for dataset in DATASETS.values():
        assert issubclass(dataset.module, TabrasaDataModule)
        data = yaml.safe_load((ROOT / "configs" / dataset.preset).read_text())["data"]
        assert data["class_path"].rsplit(".", 1)[-1] == dataset.module.__name__  # the preset trains it
        assert "tokenizer" in data["init_args"]  # and names the tokenizer the module is handed


def test_list_names_every_dataset_and_its_status(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PSORTB_ROOT", str(tmp_path / "nowhere"))
    monkeypatch.setenv("TABRASA_CACHE", str(tmp_path))
    assert tabrasa_main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in DATASETS)
    assert "MISSING" in out and "apt-get install psortb" in out


def test_prepare_missing_source_exits_with_the_package(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PSORTB_ROOT", str(tmp_path / "nowhere"))
    monkeypatch.setenv("TABRASA_CACHE", str(tmp_path))
    assert main(["prepare", "psortb"]) == 2
    assert "apt-get download psortb" in capsys.readouterr().err


def test_prepare_by_name_with_overrides_caches_the_splits(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PSORTB_ROOT", str(tmp_path / "psort"))
    monkeypatch.setenv("TABRASA_CACHE", str(tmp_path / "cache"))
    write_fake_psortb(tmp_path / "psort")
    assert (
        main(["prepare", "psortb", "--set", "val_size=5", "--set", "test_size=10", "--set", "split=random"])
        == 0
    )
    out = capsys.readouterr().out
    assert "5 classes" in out and "test" in out and "10 rows" in out
    assert any((tmp_path / "cache" / "psortb-gramneg").glob("splits-*"))


def test_prepare_reads_the_data_section_of_a_config() -> None:
    data = data_module_from(None, str(ROOT / "configs" / "protein" / "psortb.yaml"), ["loader.batch_size=7"])
    assert type(data).__name__ == "PSORTbDataModule"
    assert data.batch_size == 7 and data.tokenizer.max_length == 256
    with pytest.raises(SystemExit, match="one of them"):
        data_module_from("psortb", "x.yaml", [])
