"""A task that starts from a pretrained checkpoint reads it when a run starts, once, and never again when
the run restores its own checkpoint: restoring a fine-tune must not depend on the base checkpoint."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.pretrained.config import PretrainedConfig, PretrainedSource
from tabrasa.pretrained.tabrasa_format import save_tabrasa
from tabrasa.tasks import Classifier, OptimConfig
from tabrasa.tokenizers.bytes import ByteTokenizer
from tabrasa.training import SafetensorsCheckpointIO

CONFIG = EncoderConfig(dim=32, depth=1, heads=4, max_len=16, dropout=0.0)


def base_checkpoint(folder: Path) -> Path:
    tokenizer = ByteTokenizer(max_length=16)
    torch.manual_seed(123)
    encoder, embedder = Encoder(CONFIG), tokenizer.embedder(32)
    config = PretrainedConfig(family="tabrasa", encoder=CONFIG, embedder=embedder.to_spec())
    return save_tabrasa(encoder, embedder, config, folder)


def batches() -> DataLoader[dict[str, torch.Tensor]]:
    tok = ByteTokenizer(max_length=16)
    texts, labels = ["good", "fine", "bad", "dull"], [1, 1, 0, 0]
    batch = {**tok.collate([tok.encode(t) for t in texts]), "label": torch.tensor(labels)}
    return DataLoader([batch], batch_size=None)  # one ready-made batch per step


def classifier(base: Path) -> Classifier:
    source = PretrainedSource(family="tabrasa", path=str(base))
    return Classifier(ByteTokenizer(max_length=16), 2, Encoder(CONFIG), pretrained=source,
                      optimizer=OptimConfig(lr=1e-2))  # fmt: skip


def trainer(root: Path) -> pl.Trainer:
    return pl.Trainer(
        max_steps=3,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
        enable_checkpointing=False,
        plugins=[SafetensorsCheckpointIO()],
    )


def test_base_weights_load_at_fit_start_and_a_restore_never_reads_them_again(tmp_path: Path) -> None:
    base = base_checkpoint(tmp_path / "base")
    model = classifier(base)
    random_start = model.backbone.blocks[0].attn.qkv.weight.detach().clone()
    fit = trainer(tmp_path)
    loaded_at_start: list[torch.Tensor] = []

    class Spy(pl.Callback):
        def on_train_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
            loaded_at_start.append(module.backbone.blocks[0].attn.qkv.weight.detach().clone())

    fit.callbacks.append(Spy())
    fit.fit(model, train_dataloaders=batches())
    torch.manual_seed(123)
    pretrained = Encoder(CONFIG)  # what base_checkpoint saved
    assert torch.equal(loaded_at_start[0], pretrained.blocks[0].attn.qkv.weight)  # the base, not random
    assert not torch.equal(loaded_at_start[0], random_start)
    fit.save_checkpoint(tmp_path / "tuned.ckpt")
    tuned = model.backbone.blocks[0].attn.qkv.weight.detach().clone()
    assert not torch.equal(tuned, loaded_at_start[0])  # fine-tuning moved it

    shutil.rmtree(base)  # the base checkpoint is gone: restoring the fine-tune must not need it
    restored = classifier(base)
    trainer(tmp_path).validate(restored, dataloaders=batches(), ckpt_path=tmp_path / "tuned.ckpt")
    assert torch.equal(restored.backbone.blocks[0].attn.qkv.weight, tuned)
