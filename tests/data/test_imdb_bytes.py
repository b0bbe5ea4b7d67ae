"""The byte tokenizer trains on IMDB through the existing data module, from one config, with no vocabulary."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabrasa.tokenizers.bytes import VOCAB_SIZE, ByteTokenizer
from tabrasa.training.lightning_cli import build_cli

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "text" / "imdb_bytes.yaml"


@pytest.mark.slow  # reads and splits all 25,000 reviews before the limit: ~13 s on 2 cores
def test_imdb_bytes_config_injects_the_tokenizer_and_trains_two_steps(tmp_path: Path) -> None:
    cli = build_cli(
        [
            "--config", str(CONFIG),
            "--data.init_args.limit", "16", "--data.init_args.loader.batch_size", "8",
            "--data.init_args.cache_dir", str(tmp_path / "cache"),
            "--data.init_args.tokenizer.init_args.max_length", "64",
            "--trainer.max_steps", "2", "--trainer.limit_val_batches", "1",
            "--trainer.enable_progress_bar", "false", "--trainer.logger.init_args.save_dir", str(tmp_path),
            "--trainer.default_root_dir", str(tmp_path),
        ],
        run=False,
        save_config=False,
    )  # fmt: skip
    assert isinstance(cli.datamodule.tokenizer, ByteTokenizer)
    assert not list(tmp_path.glob("cache/imdb/vocab-*.json")), "no vocabulary is trained for bytes"
    assert cli.model.embedder.token_embed.num_embeddings == VOCAB_SIZE
    before = cli.model.embedder.token_embed.weight.detach().clone()
    cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    assert cli.trainer.global_step == 2
    assert not cli.model.embedder.token_embed.weight.detach().equal(before)  # the byte table learned
