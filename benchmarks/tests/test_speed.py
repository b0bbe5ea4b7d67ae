"""Speed switches change speed, not the model: int8 and bf16 stay close to fp32 and leave the original."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from benchmarks.speed import autocast, bf16_supported, quantize_int8
from tabrasa.backbone import Encoder, EncoderConfig


def small_encoder() -> Encoder:
    return Encoder(EncoderConfig(dim=32, depth=2, heads=4))


def test_int8_quantizes_every_linear_of_a_copy_and_stays_close() -> None:
    model = small_encoder().train()
    x = torch.randn(2, 8, 32)
    quantized = quantize_int8(model)
    assert model.training and type(model.blocks[0].attn.qkv) is nn.Linear  # the original is untouched
    assert not quantized.training
    assert not any(type(m) is nn.Linear for m in quantized.modules())
    with torch.inference_mode():
        expected = model.eval()(x)
        torch.testing.assert_close(quantized(x), expected, atol=0.05, rtol=0.05)


def test_bf16_autocast_runs_matmuls_in_bf16_and_fp32_changes_nothing() -> None:
    layer = nn.Linear(8, 8)
    x = torch.randn(2, 8)
    with autocast("bf16", "cpu"):
        assert layer(x).dtype == torch.bfloat16
    with autocast("fp32", "cpu"):
        assert layer(x).dtype == torch.float32
    with pytest.raises(ValueError, match="choose fp32 or bf16"), autocast("fp16", "cpu"):  # type: ignore[arg-type]
        pass


def test_bf16_autocast_warns_exactly_where_bf16_is_not_native() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autocast("bf16", "cpu"):
            pass
    slow = [w for w in caught if "slower than fp32" in str(w.message)]
    assert len(slow) == (0 if bf16_supported("cpu") else 1)
    if not torch.cuda.is_available():
        assert bf16_supported("cuda") is False
