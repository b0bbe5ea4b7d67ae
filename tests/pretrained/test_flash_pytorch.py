"""flash-pytorch's GAU and FLASH layers, tiny and random, converted by tabrasa/pretrained/flash_pytorch.py
and compared with tabrasa's GAUEncoder to 1e-5; padding, export and the refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

import tabrasa.pretrained.flash_pytorch as converter
from tabrasa.backbone import GAUEncoder
from tabrasa.pretrained.engine import CheckpointMismatchError
from tabrasa.pretrained.flash_pytorch import export_flash_pytorch, load_flash_pytorch, zero_relative_bias
from tests.availability import require_module
from tests.pretrained.helpers import assert_match

flash_pytorch = require_module("flash_pytorch", "the reference GAU/FLASH: pip install flash-pytorch==0.1.9")
rotary_embedding_torch = require_module("rotary_embedding_torch", "flash-pytorch's rotary library")
ScaleNorm = flash_pytorch.flash_pytorch.ScaleNorm

DIM, N = 32, 10  # 10 tokens: FLASH's groups of 4 end with a partial one

LAYERS: dict[str, Callable[[], nn.Module]] = {
    "gau": lambda: flash_pytorch.GAU(dim=DIM, query_key_dim=16),
    "gau_scalenorm_laplace": lambda: flash_pytorch.GAU(
        dim=DIM, query_key_dim=16, norm_klass=ScaleNorm, laplace_attn_fn=True
    ),
    "flash_partial_rotary_shift": lambda: flash_pytorch.FLASH(
        dim=DIM, group_size=4, query_key_dim=16, rotary_pos_emb=ROTARY, shift_tokens=True
    ),
    "flash_scalenorm_laplace": lambda: flash_pytorch.FLASH(
        dim=DIM,
        group_size=4,
        query_key_dim=16,
        expansion_factor=1.5,
        norm_klass=ScaleNorm,
        laplace_attn_fn=True,
    ),
}
ROTARY = rotary_embedding_torch.RotaryEmbedding(dim=8)  # 8 of 16 channels, shared as FLASHTransformer does


def randomise(model: nn.Module, seed: int = 0) -> nn.Module:
    """Every weight perturbed, so a wrong mapping cannot hide; queries and keys of order 1/2 and keys near
    their queries, so relu² attention is neither negligible (γ starts at N(0, 0.02)) nor all zero; the T5
    tables zeroed, which is how flash-pytorch agrees with tabrasa (zero_relative_bias)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("gamma", "beta")):
                queries = 0.5 * torch.randn_like(p[: len(p) // 2])
                p.copy_(torch.cat((queries, queries + 0.25 * torch.randn_like(queries))))
            elif p.requires_grad:  # not the rotary frequencies
                p.add_(0.1 * torch.randn_like(p))
    zero_relative_bias(model)
    return model.eval()


def reference(kind: str, depth: int = 2) -> nn.ModuleList:
    return randomise(nn.ModuleList(LAYERS[kind]() for _ in range(depth)))


def run(layers: nn.ModuleList, x: torch.Tensor, **kwargs: Any) -> torch.Tensor:
    with torch.no_grad():
        for layer in layers:
            x = layer(x, **kwargs)
    return x


@pytest.mark.parametrize("kind", list(LAYERS))
def test_converted_layers_match_flash_pytorch(kind: str) -> None:
    ref = reference(kind)
    ours = load_flash_pytorch(ref).eval()
    x = torch.randn(2, N, DIM)
    expected = run(ref, x)
    assert (expected - x).abs().max() > 0.1  # the units change their input: there is something to match
    with torch.no_grad():
        assert_match(f"flash-pytorch {kind}", ours(x), expected)


@pytest.mark.parametrize("kind", ["gau", "flash_partial_rotary_shift"])
def test_padding_matches_flash_pytorch_on_the_row_without_padding(kind: str) -> None:
    """tabrasa on a padded batch equals flash-pytorch on each row alone; flash-pytorch's own masked output
    does not (its 1/n counts the padding), which is the documented disagreement."""
    ref = reference(kind)
    ours = load_flash_pytorch(ref).eval()
    x = torch.randn(2, N, DIM)
    mask = torch.ones(2, N, dtype=torch.bool)
    mask[1, 6:] = False
    with torch.no_grad():
        out = ours(x, mask)
    alone = run(ref, x[1:, :6])
    assert_match(f"flash-pytorch {kind}, padded row", out[1:, :6], alone)
    assert_match(f"flash-pytorch {kind}, full row", out[:1], run(ref, x[:1]))
    assert torch.all(out[1, 6:] == 0)
    assert (run(ref, x, mask=mask)[1:, :6] - alone).abs().max() > 1e-4


def test_flash_transformer_layers_match_on_its_own_embeddings() -> None:
    """FLASHTransformer as built (ScaleNorm, token shift, rotary on min(32, s) channels): its layers on its
    embeddings plus scaled sinusoids, against the converted encoder fed the same embeddings."""
    model = randomise(
        flash_pytorch.FLASHTransformer(dim=DIM, num_tokens=20, depth=2, group_size=4, query_key_dim=16)
    )
    ids = torch.randint(0, 20, (2, N), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        x = model.token_emb(ids)
        x = model.abs_pos_emb(x) + x
    ours = load_flash_pytorch(model.layers).eval()
    assert ours.config.norm == "scalenorm" and ours.config.shift_tokens and ours.config.rotated == 16
    with torch.no_grad():
        assert_match("flash-pytorch FLASHTransformer layers", ours(x), run(model.layers, x))


@pytest.mark.parametrize("kind", list(LAYERS))
def test_export_gives_back_the_reference_state_exactly(kind: str) -> None:
    ref = reference(kind)
    exported = export_flash_pytorch(load_flash_pytorch(ref))
    original = ref.state_dict()
    assert set(exported) == set(original)
    for key, tensor in original.items():
        assert torch.equal(exported[key], tensor), key
    fresh = nn.ModuleList(LAYERS[kind]() for _ in range(2)).eval()
    fresh.load_state_dict(exported, strict=True)
    x = torch.randn(2, N, DIM)
    torch.testing.assert_close(run(fresh, x), run(ref, x), atol=0, rtol=0)


def test_counter_without_the_rotary_channel_permutation_the_outputs_differ(monkeypatch) -> None:
    ref = reference("flash_partial_rotary_shift")
    monkeypatch.setattr(converter, "_pairs_to_halves", lambda config: torch.arange(config.qk_dim))
    x = torch.randn(2, N, DIM)
    with torch.no_grad():
        assert (load_flash_pytorch(ref).eval()(x) - run(ref, x)).abs().max() > 1e-3


def test_counter_queries_and_keys_swapped_are_caught() -> None:
    ref = reference("gau")
    ours = load_flash_pytorch(ref).eval()
    state = ours.state_dict()
    for key in [k for k in state if "scale_offset" in k]:
        state[key] = state[key].flip(0)  # rows q, k → k, q: the attention matrix transposed
    swapped = GAUEncoder(ours.config).eval()
    swapped.load_state_dict(state)
    x = torch.randn(2, N, DIM)
    with torch.no_grad():
        assert (swapped(x) - run(ref, x)).abs().max() > 1e-3


def test_a_trained_relative_bias_is_refused_not_dropped() -> None:
    ref = reference("gau")
    with torch.no_grad():
        ref[1].rel_pos_bias.relative_attention_bias.weight.normal_()
    with pytest.raises(ValueError, match=r"1\.rel_pos_bias\.relative_attention_bias\.weight is not zero"):
        load_flash_pytorch(ref)


@pytest.mark.parametrize(
    ("layers", "message"),
    [
        (lambda: [flash_pytorch.GAU(dim=DIM, causal=True)], "causal attention"),
        (
            lambda: [flash_pytorch.FLASH(dim=DIM, reduce_group_non_causal_attn=False)],
            "per-group linear attention",
        ),
        (
            lambda: [flash_pytorch.GAU(dim=DIM), flash_pytorch.FLASH(dim=DIM)],
            "layers of different shapes or options",
        ),
        (lambda: [nn.Linear(DIM, DIM)], "a layer of type Linear"),
        (lambda: [], "an empty layer list"),
    ],
)
def test_variants_tabrasa_cannot_compute_are_refused(
    layers: Callable[[], list[nn.Module]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        load_flash_pytorch(nn.ModuleList(layers()))


def test_export_refuses_what_flash_pytorch_cannot_compute() -> None:
    ours = load_flash_pytorch(reference("gau"))
    ours.config.final_norm = True
    with pytest.raises(ValueError, match="a final norm"):
        export_flash_pytorch(ours)
    ours.config.final_norm = False
    ours.config.positions = "rotary"
    with pytest.raises(ValueError, match="rotary positions is not supported"):
        export_flash_pytorch(ours)
    state = {"0.norm.weight": torch.ones(DIM), "0.stray": torch.ones(1)}
    with pytest.raises(CheckpointMismatchError, match=r"0\.stray"):
        converter.map_keys(state, converter.key_map(ours.config))
