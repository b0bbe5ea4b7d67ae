"""Which parameters AdamW decays: decided by each parameter's role, not by its name.

Decayed: weight matrices and convolution kernels (Linear, Conv, LSTM gate matrices, projections).
Not decayed: biases and norm gains (any tensor of fewer than two dimensions), token embedding tables
(`nn.Embedding`), norm layers, and every parameter a module lists in its `no_weight_decay()` hook (position
tables, class / distillation / register tokens), as timm's `no_weight_decay()` and nanoGPT's optimizer
groups do. Decaying gains, biases and embedding rows pulls them towards zero for no regularising benefit
(Loshchilov & Hutter 2019; Devlin et al. 2019 exclude them for BERT).
"""

from __future__ import annotations

from collections.abc import Iterator

from torch import nn

# Layer types whose parameters are tables or gains whatever their shape.
NO_DECAY_MODULES: tuple[type[nn.Module], ...] = (
    nn.Embedding,
    nn.EmbeddingBag,
    nn.LayerNorm,
    nn.GroupNorm,
    nn.RMSNorm,
    nn.modules.batchnorm._NormBase,
)


def declared_no_decay(model: nn.Module) -> set[str]:
    """Full names of the parameters that modules list in their `no_weight_decay()` hook (names relative
    to the module that declares them, as in timm)."""
    names: set[str] = set()
    for prefix, module in model.named_modules():
        hook = getattr(module, "no_weight_decay", None)
        if callable(hook):
            names |= {f"{prefix}.{name}" if prefix else name for name in hook()}
    return names


def _owned_parameters(model: nn.Module) -> Iterator[tuple[str, nn.Module, nn.Parameter]]:
    for prefix, module in model.named_modules():
        for name, param in module.named_parameters(recurse=False):
            yield (f"{prefix}.{name}" if prefix else name), module, param


def decays(model: nn.Module) -> dict[str, bool]:
    """Every trainable parameter's full name → whether AdamW should decay it."""
    declared = declared_no_decay(model)
    unknown = declared - {name for name, _ in model.named_parameters()}
    if unknown:
        raise ValueError(
            f"no_weight_decay() names parameters that do not exist: {sorted(unknown)}; "
            "fix the hook to return names relative to the module that declares it"
        )
    return {
        name: param.ndim >= 2 and not isinstance(module, NO_DECAY_MODULES) and name not in declared
        for name, module, param in _owned_parameters(model)
        if param.requires_grad
    }


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, object]]:
    """Two AdamW groups: decayed matrices and kernels, and everything else at weight_decay 0."""
    roles = decays(model)
    params = dict(model.named_parameters())
    decay = [params[name] for name, d in roles.items() if d]
    no_decay = [params[name] for name, d in roles.items() if not d]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
