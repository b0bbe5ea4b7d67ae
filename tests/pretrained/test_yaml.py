"""Starting a task config from pretrained weights: the blocks a YAML file holds, parsed as the CLI does."""

from __future__ import annotations

import pickle

import torch
import yaml
from jsonargparse import ArgumentParser

from tabrasa.backbone import Encoder, EncoderConfig
from tabrasa.pretrained import PretrainedSource, PretrainedTokenizer, load_into, load_pretrained
from tests.pretrained.conftest import Reference
from tests.pretrained.helpers import run

TASK_YAML = """
tokenizer:
  class_path: tabrasa.pretrained.PretrainedTokenizer
  init_args: {{family: bert, path: {path}, max_length: 12}}
backbone:
  config: {{dim: 32, depth: 2, heads: 4, mlp_ratio: 2.0, norm_placement: post, norm_eps: 1.0e-12,
           input_norm: true, final_norm: false, positions: learned, max_len: 24, dropout: 0.1}}
pretrained: {{family: bert, path: {path}}}
"""


def parse(text: str):
    parser = ArgumentParser()
    parser.add_argument("--tokenizer", type=PretrainedTokenizer)
    parser.add_argument("--backbone.config", type=EncoderConfig)
    parser.add_argument("--pretrained", type=PretrainedSource | None)
    return parser.instantiate_classes(parser.parse_object(yaml.safe_load(text)))


def test_a_task_config_starts_from_pretrained_weights(tiny_bert: Reference) -> None:
    cfg = parse(TASK_YAML.format(path=tiny_bert.folder))
    tokenizer, source = cfg.tokenizer, cfg.pretrained
    embedder, backbone = tokenizer.embedder(32), Encoder(cfg.backbone.config)  # what the task builds
    load_into(source, backbone, embedder)
    batch = tokenizer.collate([tokenizer("the cat sat on the mat"), tokenizer("a dog")])
    reference = load_pretrained("bert", tiny_bert.folder)
    assert torch.equal(run(reference, batch), run_modules(embedder, backbone.eval(), batch))
    assert tokenizer.max_length == 12 and tokenizer.vocab_size == reference.embedder.vocab_size


def run_modules(embedder, backbone, batch) -> torch.Tensor:
    with torch.no_grad():
        tokens = embedder(batch)
        return backbone(tokens.x, tokens.mask)


def test_the_pretrained_tokenizer_pickles_to_workers(tiny_esm: Reference) -> None:
    tokenizer = PretrainedTokenizer("esm2", str(tiny_esm.folder))
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert torch.equal(copy("MKT")["input_ids"], tokenizer("MKT")["input_ids"])
    assert type(copy.embedder(32)).__name__ == "EsmEmbedder"
