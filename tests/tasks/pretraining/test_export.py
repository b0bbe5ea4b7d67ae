from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import BertForMaskedLM, EsmForMaskedLM

from tabrasa.pretrained.config import PretrainedSource
from tabrasa.tasks import Classifier
from tabrasa.tasks.pretraining import MaskedPatchModel, MaskedTokenModel
from tabrasa.tasks.pretraining.backbone_export import save_backbone
from tabrasa.tasks.pretraining.export import save_masked_lm
from tabrasa.tokenizers.esm import EsmProteinTokenizer
from tabrasa.tokenizers.image import ImageTokenizer
from tabrasa.tokenizers.text import TextTokenizer
from tests.tasks.pretraining.conftest import CORPUS, encoder

BERT_LIKE = {"norm_placement": "post", "input_norm": True, "final_norm": False, "norm_eps": 1e-12}
ESM_LIKE = {"positions": "rotary", "norm_eps": 1e-5}


def _perturb(model: torch.nn.Module) -> None:
    """Random LayerNorms and head bias, so a wrong mapping of either cannot hide."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)


@pytest.mark.parametrize("tied", [True, False])
def test_bert_masked_lm_export_reloads_in_transformers(
    text_tokenizer: TextTokenizer, tmp_path: Path, tied: bool
) -> None:
    model = MaskedTokenModel(text_tokenizer, encoder(**BERT_LIKE), tie_weights=tied).eval()
    _perturb(model)
    out = save_masked_lm(model, tmp_path / "bert", "bert")
    hf = BertForMaskedLM.from_pretrained(out).eval()
    batch = text_tokenizer.encode_batch(CORPUS[:3])
    with torch.no_grad():
        ours = model.logits(batch)
        theirs = hf(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"].long()).logits
    real = batch["attention_mask"]
    torch.testing.assert_close(ours[real], theirs[real], atol=1e-5, rtol=1e-5)


def test_esm_masked_lm_export_reloads_in_transformers(tmp_path: Path) -> None:
    tokenizer = EsmProteinTokenizer(max_length=32)
    model = MaskedTokenModel(tokenizer, encoder(**ESM_LIKE)).eval()
    _perturb(model)
    out = save_masked_lm(model, tmp_path / "esm", "esm")
    hf = EsmForMaskedLM.from_pretrained(out).eval()
    batch = tokenizer.collate([tokenizer("MKTAYIAKQR"), tokenizer("MLSDE<mask>".replace("<mask>", "A"))])
    batch["input_ids"][0, 3] = model.vocab.mask_id  # a mask token exercises ESM's token-dropout rule
    with torch.no_grad():
        ours = model.logits(batch)
        theirs = hf(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"].long()).logits
    real = batch["attention_mask"]
    torch.testing.assert_close(ours[real], theirs[real], atol=1e-5, rtol=1e-5)


def test_fine_tuning_starts_from_the_pretrained_backbone_and_drops_the_head(tmp_path: Path) -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=1, image_size=16)
    pretrained = MaskedPatchModel(tokenizer, encoder())
    model = pretrained
    folder = save_backbone(model.backbone, model.embedder, model.tokenizer, tmp_path / "backbone")
    source = PretrainedSource(family="tabrasa", path=str(folder))
    task = Classifier(tokenizer, 3, encoder(), pretrained=source)
    task.load_pretrained_weights()
    for mine, theirs in ((task.backbone, pretrained.backbone), (task.embedder, pretrained.embedder)):
        for (name, a), b in zip(mine.state_dict().items(), theirs.state_dict().values(), strict=True):
            assert torch.equal(a, b), name
    from safetensors.torch import load_file

    assert not any(k.startswith(("decoder", "mask_token")) for k in load_file(folder / "model.safetensors"))


@pytest.mark.parametrize(
    ("change", "setting"), [({"dim": 64, "heads": 4}, "dim"), ({"positions": "sinusoidal"}, "positions")]
)
def test_a_checkpoint_that_does_not_fit_names_the_setting(tmp_path: Path, change: dict, setting: str) -> None:
    tokenizer = ImageTokenizer(patch_size=4, channels=1, image_size=16)
    model = MaskedPatchModel(tokenizer, encoder())
    folder = save_backbone(model.backbone, model.embedder, model.tokenizer, tmp_path / "backbone")
    task = Classifier(tokenizer, 3, encoder(**change), pretrained=PretrainedSource("tabrasa", str(folder)))
    with pytest.raises(ValueError, match=setting):
        task.load_pretrained_weights()
