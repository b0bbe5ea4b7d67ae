"""flash-pytorch (0.1.9): a stack of its `GAU` or `FLASH` layers ↔ tabrasa's GAUEncoder.

The source is an `nn.ModuleList` of layers, whose state dict reads `{i}.to_hidden.0.weight`, … (as
FLASHTransformer's `layers`). flash-pytorch keeps its configuration in constructor arguments, not in a
file, so `translate` reads it from the layers themselves. FLASHTransformer's token embedding, its scaled
sinusoidal positions and its `to_logits` (a LayerNorm and the vocabulary projection) are the embedder's and
the head's, not the backbone's; the converted encoder has no final norm.

Where the two libraries differ (tabrasa/backbone/gau.py lists it): every flash-pytorch layer carries a T5
relative position bias table that tabrasa has no place for, so it must be zero (`zero_relative_bias`
configures a reference model so); rotary-embedding-torch rotates channel pairs (2i, 2i+1) and tabrasa pairs
(i, i + r/2), so the query/key channels are permuted on the way in and back on the way out, as Hugging Face's
LLaMA conversion permutes its q/k projections between the same two conventions.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from tabrasa.backbone.gau import GAUConfig, GAUEncoder
from tabrasa.pretrained.engine import KeyMap, check_fit, export_keys, map_keys, shapes_of
from tabrasa.pretrained.families import mlp_ratio, refuse

NAME = "flash-pytorch"
RELATIVE_BIAS = "rel_pos_bias.relative_attention_bias.weight"
RELATIVE_BUCKETS = 32  # flash-pytorch's T5RelativePositionBias default, the only value its layers use
ROTARY_FREQS = "rotary_pos_emb.freqs"
PERMUTED = ("base.weight", "base.bias")  # rows: the query/key channels; scale_offset.* permute columns


def key_map(config: GAUConfig) -> KeyMap:
    """The quadratic form maps flash-pytorch's GAU, the chunked form its FLASH (their names differ)."""
    quadratic = config.form == "quadratic"
    scale_offset, out = ("offsetscale", "to_out.0") if quadratic else ("qk_offset_scale", "to_out")
    norm = (
        {"norm.g": "norm.weight"}
        if config.norm == "scalenorm"
        else {p: p for p in ("norm.weight", "norm.bias")}
    )
    pairs = {
        **norm,
        **{f"to_hidden.0.{p}": f"hidden.{p}" for p in ("weight", "bias")},
        **{f"to_qk.0.{p}": f"base.{p}" for p in ("weight", "bias")},
        **{f"{scale_offset}.{p}": f"scale_offset.{p}" for p in ("gamma", "beta")},
        **{f"{out}.{p}": f"out.{p}" for p in ("weight", "bias")},
    }
    return KeyMap(
        rules={f"{{}}.{src}": f"units.{{}}.{dst}" for src, dst in pairs.items()},
        ignore={
            f"*.{RELATIVE_BIAS}": "the T5 relative bias, checked to be zero: tabrasa's GAU has none",
            f"*.{ROTARY_FREQS}": "the rotary frequencies, constants that `translate` reads rotary_dim and "
            "the base from",
        },
    )


def translate(layers: nn.ModuleList, max_len: int = 512) -> GAUConfig:
    """The GAUConfig that computes what `layers` compute, or a ValueError naming what it cannot."""
    refuse(len(layers) == 0, NAME, "an empty layer list")
    configs = [_layer_config(layer, max_len) for layer in layers]
    refuse(any(c != configs[0] for c in configs), NAME, "layers of different shapes or options")
    return replace(configs[0], depth=len(layers))


def load_flash_pytorch(layers: nn.ModuleList, max_len: int = 512) -> GAUEncoder:
    """A GAUEncoder with the weights of `layers`, loaded strictly (every key placed, every shape equal)."""
    config = translate(layers, max_len)
    state = layers.state_dict()
    nonzero = sorted(k for k, v in state.items() if k.endswith(RELATIVE_BIAS) and bool(v.any()))
    if nonzero:
        raise ValueError(
            f"{NAME}: {', '.join(nonzero)} is not zero, but tabrasa's GAU has no T5 relative position bias; "
            f"zero the tables before training the reference (zero_relative_bias), or train tabrasa's GAU"
        )
    mapped = map_keys(state, key_map(config), NAME).state
    if config.positions == "rotary":
        mapped = _permute(mapped, _pairs_to_halves(config))
    model = GAUEncoder(config)
    check_fit(mapped, shapes_of(model.state_dict()), NAME)
    model.load_state_dict(mapped)
    return model


def export_flash_pytorch(model: GAUEncoder) -> dict[str, torch.Tensor]:
    """The state dict of the equivalent flash-pytorch layer list (strict-loadable: zero T5 tables and the
    rotary frequencies included); refuses what flash-pytorch cannot compute."""
    c = model.config
    quadratic = c.form == "quadratic"
    refuse(c.final_norm, NAME, "a final norm (FLASHTransformer's is part of its to_logits head)")
    refuse(c.norm == "rmsnorm", NAME, "RMSNorm")
    refuse(
        c.positions not in (("none",) if quadratic else ("none", "rotary")), NAME, f"{c.positions} positions"
    )
    refuse(quadratic and c.shift_tokens, NAME, "token shift in a GAU (FLASH has it)")
    state = model.state_dict()
    if c.positions == "rotary":
        state = _permute(state, torch.argsort(_pairs_to_halves(c)))
    out = export_keys(state, key_map(c))
    for i in range(c.depth):
        out[f"{i}.{RELATIVE_BIAS}"] = torch.zeros(RELATIVE_BUCKETS, 1)
        if c.positions == "rotary":
            out[f"{i}.{ROTARY_FREQS}"] = _frequencies(c.rotated, c.rotary_base)
    return out


def zero_relative_bias(layers: nn.Module) -> None:
    """Configure flash-pytorch layers to agree with tabrasa's GAU: zero (and freeze) their T5 bias tables."""
    for name, p in layers.named_parameters():
        if name.endswith(RELATIVE_BIAS):
            p.requires_grad_(False).zero_()


def _layer_config(layer: nn.Module, max_len: int) -> GAUConfig:
    from flash_pytorch import FLASH, GAU
    from flash_pytorch.flash_pytorch import LaplacianAttnFn, ScaleNorm

    refuse(not isinstance(layer, GAU | FLASH), NAME, f"a layer of type {type(layer).__name__}")
    refuse(layer.causal, NAME, "causal attention (tabrasa's GAU is a bidirectional encoder)")
    quadratic = isinstance(layer, GAU)
    if not quadratic:
        refuse(not layer.reduce_group_non_causal_attn, NAME, "per-group linear attention")
    dim, hidden = layer.to_hidden[0].in_features, layer.to_hidden[0].out_features // 2
    norm = layer.norm
    refuse(not isinstance(norm, nn.LayerNorm | ScaleNorm), NAME, f"a {type(norm).__name__} norm")
    rotary = None if quadratic else layer.rotary_pos_emb
    rotary_dim, base = _rotary(rotary) if rotary is not None else (None, 10000.0)
    return GAUConfig(
        dim=dim,
        depth=1,
        expansion=mlp_ratio(hidden, dim, NAME),
        qk_dim=layer.to_qk[0].out_features,
        form="quadratic" if quadratic else "chunked",
        chunk=256 if quadratic else layer.group_size,
        kernel="laplace" if isinstance(layer.attn_fn, LaplacianAttnFn) else "relu2",
        norm="scalenorm" if isinstance(norm, ScaleNorm) else "layernorm",
        norm_eps=norm.eps,
        final_norm=False,
        shift_tokens=False if quadratic else layer.shift_tokens,
        positions="none" if rotary is None else "rotary",
        rotary_dim=rotary_dim,
        rotary_base=base,
        max_len=max_len,
        dropout=layer.dropout.p,
    )


def _rotary(rotary: nn.Module) -> tuple[int, float]:
    """rotary_dim and base of a rotary-embedding-torch RotaryEmbedding, refusing its other variants."""
    refuse(
        rotary.freqs_for != "lang" or rotary.learned_freq, NAME, "rotary frequencies other than RoFormer's"
    )
    refuse(rotary.use_xpos or rotary.interpolate_factor != 1.0, NAME, "xpos or interpolated rotary positions")
    freqs = rotary.freqs.detach().float()
    dim = 2 * freqs.numel()
    base = float(freqs[1].double() ** (-dim / 2)) if freqs.numel() > 1 else 10000.0
    if torch.allclose(freqs, _frequencies(dim, round(base)), rtol=1e-5):
        base = float(round(base))  # the float32 table gives 10000.001 for 10000: keep the round number
    refuse(not torch.allclose(freqs, _frequencies(dim, base), rtol=1e-5), NAME, "custom rotary frequencies")
    return dim, base


def _frequencies(dim: int, base: float) -> torch.Tensor:
    return 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))  # RoFormer's, as both libraries make them


def _pairs_to_halves(config: GAUConfig) -> torch.Tensor:
    """Channel order taking rotary pairs (2i, 2i+1) to (i, i + r/2); unrotated channels stay put."""
    r = config.rotated
    return torch.cat((torch.arange(0, r, 2), torch.arange(1, r, 2), torch.arange(r, config.qk_dim)))


def _permute(state: dict[str, torch.Tensor], order: torch.Tensor) -> dict[str, torch.Tensor]:
    """New channel c is old channel order[c] in the base's rows and in every scale/offset's columns:
    q·k sums over channels, so only the rotary pairing sees the order."""
    out = dict(state)
    for key, t in state.items():
        if key.endswith(PERMUTED):
            out[key] = t[order]
        elif key.endswith(("scale_offset.gamma", "scale_offset.beta")):
            out[key] = t[:, order]
    return out
