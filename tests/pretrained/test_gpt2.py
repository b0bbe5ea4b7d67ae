"""GPT-2: causal, pre-LN, Conv1D weights transposed; a tiny random GPT2Model and the 124M key map."""

from __future__ import annotations

import torch
from safetensors.torch import load_file, save_file

from tabrasa.pretrained import check_checkpoint, load_pretrained
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, hf_file_state, run


def test_tiny_gpt2_matches_transformers_with_padding(tiny_gpt2: Reference) -> None:
    model = load_pretrained("gpt2", tiny_gpt2.folder)
    assert model.config.encoder.causal and model.tokenizer is None
    assert model.embedder.token_embed.padding_idx is None  # GPT-2 has no pad token to freeze
    ids = torch.tensor([[5, 17, 3, 9, 42, 8], [11, 2, 30, 0, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]]).bool()
    with torch.no_grad():
        expected = tiny_gpt2.model(input_ids=ids, attention_mask=mask.long()).last_hidden_state
    assert_match("gpt2 (tiny random)", run(model, {"input_ids": ids, "attention_mask": mask}), expected, mask)


def test_old_checkpoint_buffers_are_ignored_not_unknown(tiny_gpt2: Reference, tmp_path) -> None:
    state = load_file(str(tiny_gpt2.folder / "model.safetensors"))
    state |= {"h.0.attn.bias": torch.ones(1, 1, 16, 16), "h.0.attn.masked_bias": torch.tensor(-1e4)}
    save_file(state, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text((tiny_gpt2.folder / "config.json").read_text())
    assert load_pretrained("gpt2", tmp_path).ignored == ["h.0.attn.bias", "h.0.attn.masked_bias"]


def test_gpt2_124m_key_map_on_meta() -> None:
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config()
    pconf = check_checkpoint("gpt2", hf_file_state(GPT2Model, config), config.to_dict())
    assert (pconf.encoder.dim, pconf.encoder.depth, pconf.encoder.activation) == (768, 12, "gelu_tanh")
