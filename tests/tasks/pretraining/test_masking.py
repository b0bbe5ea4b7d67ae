from __future__ import annotations

import pytest
import torch

from tabrasa.errors import UserError
from tabrasa.tasks.pretraining.masking import block_mask, check_ratio, choose, random_mask


@pytest.mark.parametrize("ratio", [0.0, 1.0, -0.1, 1.5])
def test_ratio_outside_open_interval_is_a_user_error(ratio: float) -> None:
    with pytest.raises(UserError, match="mask_ratio"):
        check_ratio(ratio, "mask_ratio")


def test_random_mask_hides_the_share_of_maskable_tokens_only() -> None:
    maskable = torch.zeros(3, 20, dtype=torch.bool)
    maskable[0, :20] = True
    maskable[1, 2:12] = True  # 10 real tokens, rest padding
    chosen = random_mask(maskable, 0.5)
    assert chosen.sum(-1).tolist() == [10, 5, 0]
    assert not (chosen & ~maskable).any()


def test_short_sequences_still_get_one_masked_token() -> None:
    maskable = torch.tensor([[True, True, False]])
    assert random_mask(maskable, 0.15).sum() == 1


def test_block_mask_reaches_the_count_inside_the_allowed_tokens() -> None:
    maskable = torch.ones(4, 36, dtype=torch.bool)
    maskable[1, 18:] = False  # the lower half of a 6x6 grid is padding
    chosen = block_mask(maskable, 0.6, 6, 6)
    assert chosen.sum(-1).tolist() == [22, 11, 22, 22]
    assert not (chosen & ~maskable).any()


def test_block_masking_needs_a_grid() -> None:
    with pytest.raises(UserError, match="block"):
        choose(torch.ones(1, 4, dtype=torch.bool), 0.5, "block", None)
