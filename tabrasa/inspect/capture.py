"""Capture a trained model's attention weights for one batch: every layer and head, padding excluded.

The fused kernel never forms the (N, N) weight matrix, so the encoder is asked to run each mixer's explicit
path (`Encoder.forward(..., return_attention=True)`), whose outputs are tested equal to the fused path's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import torch

from tabrasa.backbone.encoder import Encoder
from tabrasa.backbone.tokens import TokenGrid
from tabrasa.errors import UserError
from tabrasa.inspect.labels import token_labels
from tabrasa.tokenizers.base import Embedder, Tokenizer


@dataclass
class AttentionMaps:
    """Attention weights of one batch.

    weights: one array per layer, (B, H, N, N), query rows × key columns, 0 at padded queries and keys.
        The N tokens are the encoder's own: its R register tokens (if any) first, then the embedder's.
    mask: (B, N) True at real tokens (registers included).
    grid: where tokens after `grid.prefix` lie on a patch grid (prefix counts CLS and registers); None for
        sequences.
    labels: per example, one string per token (text and protein tokenizers), else None.
    registers: R, the leading register tokens.
    """

    weights: list[np.ndarray]
    mask: np.ndarray
    grid: TokenGrid | None = None
    labels: list[list[str]] | None = None
    registers: int = 0

    @property
    def layers(self) -> int:
        return len(self.weights)

    @property
    def heads(self) -> int:
        return self.weights[0].shape[1]

    def example(self, index: int) -> list[np.ndarray]:
        """Example `index`'s weights per layer, (H, n, n) over its n real tokens only."""
        real = self.mask[index]
        return [w[index][:, real][:, :, real] for w in self.weights]

    def example_labels(self, index: int) -> list[str] | None:
        """Example `index`'s labels for its real tokens, or None."""
        if self.labels is None:
            return None
        return [label for label, real in zip(self.labels[index], self.mask[index], strict=True) if real]


def attention_maps(
    model_or_encoder: object,
    embedder: Embedder | None,
    batch: Mapping[str, torch.Tensor],
    tokenizer: Tokenizer | None = None,
) -> AttentionMaps:
    """Per-layer (B, H, N, N) attention weights of `batch`, padding excluded, with token labels if any.

    model_or_encoder: a tabrasa Encoder, a task (`.backbone` and `.embedder`, e.g. a trained Classifier)
        or a loaded pretrained model (`.encoder`, `.embedder`, `.tokenizer`).
    embedder: turns the batch into tokens; None takes the model's own. tokenizer: gives the token labels;
        None takes the model's own, if it has one.
    """
    encoder = _encoder_of(model_or_encoder)
    embedder = embedder if embedder is not None else getattr(model_or_encoder, "embedder", None)
    if embedder is None:
        raise UserError(
            f"{type(model_or_encoder).__name__} has no embedder; pass the tokenizer's embedder to "
            f"attention_maps(encoder, embedder, batch)"
        )
    tokenizer = tokenizer if tokenizer is not None else getattr(model_or_encoder, "tokenizer", None)
    # Eval mode (no dropout) for the capture only: a model mid-training is handed back as it came.
    modes = [(module, module.training) for module in (encoder, embedder)]
    try:
        for module, _ in modes:
            module.eval()
        device = next(encoder.parameters()).device
        on_device = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
        with torch.no_grad():
            tokens = embedder(on_device)
            _, weights = encoder(tokens.x, tokens.mask, grid=tokens.grid, return_attention=True)
    finally:
        for module, training in modes:
            module.train(training)
    R = encoder.config.register_tokens
    mask = torch.cat((tokens.mask.new_ones(tokens.mask.shape[0], R), tokens.mask.bool()), dim=1)  # (B, R+N)
    real = mask[:, None, :, None] & mask[:, None, None, :]  # (B, 1, R+N, R+N): real query and real key
    arrays = [w.float().masked_fill(~real, 0.0).cpu().numpy() for w in weights]
    grid = None if tokens.grid is None else replace(tokens.grid, prefix=tokens.grid.prefix + R)
    labels = token_labels(tokenizer, batch, R) if tokenizer is not None else None
    return AttentionMaps(arrays, mask.cpu().numpy(), grid, labels, R)


def _encoder_of(model: object) -> Encoder:
    for candidate in (model, getattr(model, "backbone", None), getattr(model, "encoder", None)):
        if isinstance(candidate, Encoder):
            return candidate
    raise UserError(
        f"{type(model).__name__} is not a tabrasa transformer Encoder and holds none as `.backbone` or "
        f"`.encoder`; attention maps need attention (the CNN and LSTM baselines have none)"
    )
