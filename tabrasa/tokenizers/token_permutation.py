"""The permutation test at the token level: the backbone sees its tokens in one fixed, seeded order.

Why the transformer needs no run here. Let σ be a permutation of the N token positions and P the learned
position table (rows 0..N-1). The permuted input x' = x[σ] enters the encoder as x[σ] + P. Every later
layer (attention over a mask, per-token MLPs and norms) is permutation-equivariant, so the outputs are
those of the *unpermuted* input x + P[σ⁻¹] read in σ order: the same network with its table's rows
permuted. The rows are initialised i.i.d. (truncated normal) and every row receives its own gradient, so
training on permuted tokens is training the unpermuted model from an equally likely initialisation: the
transformer with learned positions (or none) is invariant by construction. `benchmarks/tests/
test_permutation.py::test_learned_positions_make_the_transformer_invariant_to_token_order` checks the
equality to float tolerance, and its counter-tests show rotary and sinusoidal positions, and the CNN and
LSTM baselines, are not invariant: those are what permuted runs measure.

Where it permutes: after the embedder, before the backbone; the class token (and any other prefix) stays
first. Grid tokens (image patches, spectrogram patches) permute the grid's cells: the grid keeps its
shape, so a grid baseline (PatchGridCNN) convolves over cells that are no longer neighbours. The mask moves
with the tokens, so padding stays padding.

Variable-length sequences (text, protein) have two layouts, both fixed per position index:

  slots=None ("real first", the default): the example's real tokens first, in the order their position
      keys give (`permutation.position_keys`), padding after. Position p of a longer example keeps the
      order it has among the positions of a shorter one, whatever the batch's padding. Every backbone reads
      it: the LSTM reads real tokens as a prefix, the CNN sees no gaps. For a fixed length (images,
      1-second keyword clips, or texts all cut to max_length) it is one permutation of the positions.
  slots=L ("fixed slots"): every sequence padded to L tokens after the prefix, then one permutation of the
      L slots for every example, so position p always lands in the same slot and the argument above holds
      for every length at once. Padding lands between real tokens: read it with attention or a CNN, not
      with the LSTM baseline (it reads `mask.sum()` real tokens from the front).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from tabrasa.tokenizers.base import Tokens
from tabrasa.tokenizers.permutation import check_seed, position_keys


@dataclass(frozen=True)
class TokenPermutation:
    """seed: names the permutation. slots: None (real first) or the L slots every sequence is padded to
    (see the module docstring). sequence_prefix: leading tokens of a plain sequence that stay in place; 1
    for the class token every tabrasa text, byte and protein tokenizer starts with (grid tokens take their
    prefix from the grid)."""

    seed: int
    slots: int | None = None
    sequence_prefix: int = 1

    def __post_init__(self) -> None:
        check_seed(self.seed, "permute_tokens.seed")
        if self.slots is not None and (isinstance(self.slots, bool) or self.slots < 1):
            raise ValueError(
                f"permute_tokens.slots={self.slots!r} must be a token count >= 1 (the tokenizer's max_length "
                f"minus the class token), or null to put real tokens first"
            )
        if self.sequence_prefix < 0:
            raise ValueError(f"permute_tokens.sequence_prefix={self.sequence_prefix} must be >= 0")

    def __call__(self, tokens: Tokens) -> Tokens:
        prefix = self.sequence_prefix if tokens.grid is None else tokens.grid.prefix
        x, mask = tokens.x, tokens.mask
        B, N, D = x.shape
        if prefix > N:
            raise ValueError(f"{N} tokens cannot keep a prefix of {prefix} in place")
        if self.slots is not None:
            if tokens.grid is not None:
                raise ValueError(
                    "permute_tokens.slots pads plain sequences; grid tokens (image and spectrogram patches) "
                    "permute their own cells, so leave slots null"
                )
            x, mask = _pad(x, mask, prefix, self.slots)
            keys = position_keys(self.seed, self.slots).to(x.device)[None].expand(B, -1)  # (B, L)
        else:
            keys = position_keys(self.seed, N - prefix).to(x.device)[None].expand(B, -1)  # (B, N - prefix)
            keys = keys + 2.0 * ~mask[:, prefix:]  # padding sorts after every real token (keys < 1)
        order = prefix + torch.argsort(keys, dim=1, stable=True)  # (B, cells): gather indices
        head = torch.arange(prefix, device=x.device)[None].expand(B, -1)
        order = torch.cat([head, order], dim=1)  # (B, N')
        x = x.gather(1, order[..., None].expand(-1, -1, D))
        return Tokens(x, mask.gather(1, order), tokens.grid)


def _pad(x: torch.Tensor, mask: torch.Tensor, prefix: int, slots: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad (B, N, D) tokens and their mask with zeros / False to prefix + slots tokens."""
    B, N, D = x.shape
    length = prefix + slots
    if length < N:
        raise ValueError(
            f"a batch of {N} tokens does not fit permute_tokens.slots={slots} after {prefix} prefix "
            f"token(s); raise slots to the tokenizer's max_length minus {prefix}"
        )
    x = torch.cat([x, x.new_zeros(B, length - N, D)], dim=1)
    return x, torch.cat([mask, mask.new_zeros(B, length - N)], dim=1)
