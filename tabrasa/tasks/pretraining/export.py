"""From a pretraining run to weights others start from.

`save_backbone`: the backbone and embedder as a `tabrasa` checkpoint folder (model.safetensors,
tabrasa.json, the tokenizer's files), which any task config loads with

    pretrained: {family: tabrasa, path: runs/pretrain_text/backbone}

The pretraining head (token head, mask token, patch decoder) is not written: it is dropped by name, as the
families' key maps ignore `cls.*` and `lm_head.*`. `save_masked_lm`: a masked-token model in Hugging Face's
`BertForMaskedLM` or `EsmForMaskedLM` layout, head included, which `from_pretrained` reloads.

    python -m tabrasa.tasks.pretraining.export --config configs/pretrain/text.yaml --ckpt CKPT --out DIR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Literal

import torch
from safetensors.torch import save_file

from tabrasa.errors import UserError
from tabrasa.pretrained import bert, esm2
from tabrasa.pretrained.config import PretrainedConfig
from tabrasa.pretrained.engine import export_keys
from tabrasa.pretrained.tabrasa_format import module_state
from tabrasa.tasks.pretraining.backbone_export import save_backbone
from tabrasa.tasks.pretraining.base import PretrainingTask
from tabrasa.tasks.pretraining.mlm import MaskedTokenModel
from tabrasa.tokenizers.esm import EsmEmbedder
from tabrasa.tokenizers.text import TextTokenizer
from tabrasa.training.rebuild import rebuild_run

HFLayout = Literal["bert", "esm"]


def _require(ok: bool, layout: str, setting: str) -> None:
    if not ok:
        raise UserError(f"the {layout} layout needs backbone {setting}; pretrain with that setting to export")


def masked_lm_state(task: MaskedTokenModel, layout: HFLayout) -> tuple[dict[str, torch.Tensor], dict]:
    """State dict and config.json of `BertForMaskedLM` / `EsmForMaskedLM` for this masked-token model."""
    c = task.backbone.config
    state = module_state(task.backbone, task.embedder)
    head = {k: v.detach().cpu().clone() for k, v in task.head.state_dict().items()}
    decoder = state["embedder.token_embed.weight"] if task.head.tied else head["decoder.weight"]
    config = PretrainedConfig(layout, c, task.embedder.to_spec())  # type: ignore[operator]
    if layout == "bert":
        for ok, setting in (
            (c.norm_placement == "post", "norm_placement: post"),
            (c.input_norm and not c.final_norm, "input_norm: true and final_norm: false"),
            (c.positions == "learned", "positions: learned"),
            (c.activation == "gelu", "activation: gelu"),
        ):
            _require(ok, "BertForMaskedLM", setting)
        if "embedder.type_embed.weight" not in state:  # one all-zero segment: BERT's sum is unchanged
            state["embedder.type_embed.weight"] = torch.zeros(1, c.dim)
        body = {f"bert.{k}": v for k, v in export_keys(state, bert.KEY_MAP).items()}
        names = ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm")
        body |= {"cls.predictions.decoder.weight": decoder, "cls.predictions.bias": head["bias"]}
        body["cls.predictions.decoder.bias"] = head["bias"].clone()  # BERT keeps the bias under both names
        document = bert.export_config(config) | {
            "type_vocab_size": state["embedder.type_embed.weight"].shape[0]
        }
        document |= {"architectures": ["BertForMaskedLM"], "tie_word_embeddings": task.head.tied}
    else:
        _require(isinstance(task.embedder, EsmEmbedder), "EsmForMaskedLM", "an EsmProteinTokenizer")
        for ok, setting in (
            (c.norm_placement == "pre" and c.final_norm and not c.input_norm, "pre-LN with final_norm"),
            (c.positions == "rotary", "positions: rotary"),
        ):
            _require(ok, "EsmForMaskedLM", setting)
        body = {f"esm.{k}": v for k, v in export_keys(state, esm2.KEY_MAP).items()}
        names = ("lm_head.dense", "lm_head.layer_norm")
        body |= {"lm_head.decoder.weight": decoder, "lm_head.bias": head["bias"]}
        document = esm2.export_config(config) | {"architectures": ["EsmForMaskedLM"]}
        document["tie_word_embeddings"] = task.head.tied
    for name, mine in zip(names, ("dense", "norm"), strict=True):
        body |= {f"{name}.{p}": head[f"{mine}.{p}"] for p in ("weight", "bias")}
    return {k: v.contiguous() for k, v in body.items()}, document


def save_masked_lm(task: MaskedTokenModel, out: str | Path, layout: HFLayout) -> Path:
    """`model.safetensors` + `config.json` that `BertForMaskedLM` / `EsmForMaskedLM.from_pretrained` read."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state, document = masked_lm_state(task, layout)
    # A tied decoder is the embedding table: written once, under the embedding's name, as HF saves it.
    if document.get("tie_word_embeddings"):
        state.pop("cls.predictions.decoder.weight" if layout == "bert" else "lm_head.decoder.weight")
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(document, indent=2) + "\n")
    tokenizer = getattr(task.tokenizer, "inner", task.tokenizer)
    if isinstance(tokenizer, TextTokenizer):
        tokenizer.save(out / "tokenizer.json")
    return out


def load_run(config: str, ckpt: str) -> PretrainingTask:
    """The pretraining task of a config, with the weights of one of its Lightning checkpoints."""
    task = rebuild_run(config, ckpt).model
    if not isinstance(task, PretrainingTask):
        raise UserError(f"{config} trains {type(task).__name__}, not a pretraining task")
    return task


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tabrasa.tasks.pretraining.export", description=__doc__)
    p.add_argument("--config", required=True, help="the pretraining config the checkpoint was trained with")
    p.add_argument("--ckpt", required=True, help="a Lightning checkpoint of that run")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--to", choices=("tabrasa", "bert", "esm"), default="tabrasa")
    args = p.parse_args(argv)
    task = load_run(args.config, args.ckpt)
    if args.to == "tabrasa":
        out = save_backbone(task.backbone, task.embedder, task.tokenizer, args.out)
    elif isinstance(task, MaskedTokenModel):
        out = save_masked_lm(task, args.out, args.to)
    else:
        raise UserError(f"--to {args.to} exports masked-token models only, not {type(task).__name__}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
