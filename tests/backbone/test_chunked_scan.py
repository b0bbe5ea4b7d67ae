"""The chunked selective scan against the reference recurrence: outputs, every gradient, any chunk size."""

from __future__ import annotations

import pytest
import torch

from tabrasa.backbone.chunked_scan import chunk_length, chunked_scan
from tabrasa.backbone.selective_scan import ScanInputs, selective_scan


def scan_inputs(
    batch: int = 3, length: int = 37, channels: int = 5, state: int = 4
) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    u = torch.randn(batch, length, channels, generator=g, dtype=torch.float64)
    delta = torch.nn.functional.softplus(
        torch.randn(batch, length, channels, generator=g, dtype=torch.float64)
    )
    a = -torch.rand(channels, state, generator=g, dtype=torch.float64) - 0.1
    b = torch.randn(batch, length, state, generator=g, dtype=torch.float64)
    c = torch.randn(batch, length, state, generator=g, dtype=torch.float64)
    return tuple(x.requires_grad_() for x in (u, delta, a, b, c))


def reference(
    u: torch.Tensor, delta: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor
) -> torch.Tensor:
    no_skip = torch.zeros(u.shape[-1], dtype=u.dtype)
    return selective_scan(ScanInputs(u, delta, a, b, c, no_skip), "sequential")


@pytest.mark.parametrize(
    "chunk", [1, 5, 36, 37, 100]
)  # one step, uneven chunks, one short of whole, whole, more
def test_outputs_and_gradients_equal_the_reference(chunk: int) -> None:
    inputs = scan_inputs()
    y, expected = chunked_scan(*inputs, chunk=chunk), reference(*inputs)
    torch.testing.assert_close(y, expected, atol=1e-12, rtol=1e-12)
    weights = torch.randn_like(y)
    grads = torch.autograd.grad(y, inputs, weights)
    for name, got, want in zip(
        ["u", "delta", "a", "b", "c"], grads, torch.autograd.grad(expected, inputs, weights), strict=True
    ):
        torch.testing.assert_close(got, want, atol=1e-10, rtol=1e-10, msg=f"gradient of {name}")


def test_gradcheck_with_uneven_chunks() -> None:
    inputs = scan_inputs(batch=2, length=9, channels=3, state=2)
    assert torch.autograd.gradcheck(lambda *x: chunked_scan(*x, chunk=4), inputs)


def test_a_wrong_carry_between_chunks_is_caught() -> None:
    """Counter-test: chunks scanned independently (each from a zero state) differ from the reference, so the
    equality above depends on the state crossing chunk boundaries."""
    u, delta, a, b, c = scan_inputs()
    pieces = [
        chunked_scan(*(x[:, s : s + 5] for x in (u, delta)), a, *(x[:, s : s + 5] for x in (b, c)), chunk=5)
        for s in range(0, 37, 5)
    ]
    assert (torch.cat(pieces, dim=1) - reference(u, delta, a, b, c)).abs().max() > 1e-3


def test_chunk_length_keeps_a_buffer_bounded_and_refuses_zero() -> None:
    assert chunk_length(batch=32, channels=256, state=16, length=256) == 2  # 131,072 numbers a step
    assert chunk_length(batch=32, channels=256, state=16, length=256, elements=1 << 21) == 16
    assert chunk_length(batch=1, channels=1, state=1, length=7) == 7  # never longer than the sequence
    assert chunk_length(batch=4096, channels=4096, state=16, length=9) == 1
    with pytest.raises(ValueError, match="chunk=0 must be >= 1"):
        chunked_scan(*scan_inputs(), chunk=0)
