"""Speed switches that leave the model's definition alone: bf16 autocast, torch.compile, int8 CPU inference.

Each is a thin wrapper over torch's own mechanism, kept here so scripts, benchmarks and tasks switch them
the same way and fail with a clear message where the hardware or build cannot honour them.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Literal, get_args

import torch
from torch import nn

Precision = Literal["fp32", "bf16"]


def bf16_supported(device: str | torch.device = "cpu") -> bool:
    """Whether bf16 matmuls run natively (CPU: AVX-512 BF16 or AMX via oneDNN; GPU: Ampere or newer)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


@contextlib.contextmanager
def autocast(precision: Precision, device: str | torch.device) -> Iterator[None]:
    """Run the enclosed forward pass on `device` in `precision`: "fp32" (no change) or "bf16" (mixed).

    `device` has no default: autocast is per device type, and CPU autocast leaves CUDA matmuls in fp32, so
    a default of "cpu" would time "bf16" on a GPU as fp32.

    bf16 autocast runs matmuls and attention in bfloat16 and keeps reductions, norms and the weights (the
    optimizer's copy) in fp32, as Lightning's precision="bf16-mixed" does. bf16 has fp32's exponent range,
    so unlike fp16 it needs no loss scaling. Use it around the forward pass only; backward follows it.
    """
    if precision not in get_args(Precision):
        raise ValueError(f"precision={precision!r} is not known; choose {' or '.join(get_args(Precision))}")
    if precision == "fp32":
        yield
        return
    device_type = torch.device(device).type
    if not bf16_supported(device):
        warnings.warn(
            f"bf16 autocast on {device_type} without native bf16 matmuls is slower than fp32; use fp32 here",
            stacklevel=3,
        )
    with torch.autocast(device_type, dtype=torch.bfloat16):
        yield


def compile_model(model: nn.Module, mode: str | None = None, dynamic: bool | None = None) -> nn.Module:
    """torch.compile (TorchInductor): fuses the elementwise work (bias, GELU, residual adds, norms) around the
    matmuls. dynamic=True avoids one recompilation per sequence length for variable-length text and protein;
    the first call of each new shape pays the compile time. The weights and their names are unchanged
    (compiled modules expose the original as `_orig_mod`)."""
    return torch.compile(model, mode=mode, dynamic=dynamic)


def quantize_int8(model: nn.Module) -> nn.Module:
    """A copy of `model` for CPU inference with int8 dynamic quantization of every nn.Linear.

    Weights are stored as int8 (per tensor), activations are quantized on the fly per batch, and the
    matmuls run in int8 through fbgemm; norms, softmax and the rest stay fp32. Dynamic quantization needs
    no calibration data, which suits transformers whose cost is dominated by Linear layers (Zafrir et al.
    2019). Uses torch.ao.quantization.quantize_dynamic; its deprecation notice points at torchao, whose CPU
    int8 path this build does not ship, so the notice is silenced here and only here.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*torch\.ao\.quantization.*deprecated")
        warnings.filterwarnings("ignore", message=r".*quantize_per_tensor.*deprecated")
        try:
            from torch.ao.quantization import quantize_dynamic
        except ImportError as error:  # removed from a future torch
            raise RuntimeError(
                "this torch build no longer ships torch.ao.quantization.quantize_dynamic; install torchao, "
                "then use torchao.quantization.quantize_(model, Int8DynamicActivationInt8WeightConfig())"
            ) from error
        quantized = quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8, inplace=False)
    return quantized.eval()
