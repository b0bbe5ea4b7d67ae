"""The grid CNNs with a real pixel or time-frequency prior export to ONNX with the outputs PyTorch gives,
on a batch whose second clip is padded (onnxruntime, the TorchScript exporter tabrasa export uses)."""

from __future__ import annotations

import io

import numpy as np
import onnxruntime
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tabrasa.backbone import PixelCNN, SpectrogramCNN, TokenGrid

TOLERANCE = 1e-4


class OnGrid(nn.Module):
    """A backbone as a function of (tokens, mask) on one fixed grid, which is what the graph takes."""

    def __init__(self, backbone: nn.Module, grid: TokenGrid) -> None:
        super().__init__()
        self.backbone, self.grid = backbone, grid

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.backbone(x, mask, grid=self.grid)


def onnx_outputs(model: nn.Module, *inputs: torch.Tensor) -> np.ndarray:
    graph = io.BytesIO()
    torch.onnx.export(model, inputs, graph, dynamo=False)
    session = onnxruntime.InferenceSession(graph.getvalue(), providers=["CPUExecutionProvider"])
    feeds = {spec.name: value.numpy() for spec, value in zip(session.get_inputs(), inputs, strict=True)}
    return session.run(None, feeds)[0]


@pytest.mark.parametrize(
    ("backbone", "grid"),
    [(PixelCNN(16), TokenGrid(28, 28, prefix=1)), (SpectrogramCNN(16), TokenGrid(21, 16, prefix=1))],
    ids=["pixel_cnn", "spectrogram_cnn"],  # 21 frames and 16 bins: pooling windows cut short on both axes
)
def test_the_graph_gives_pytorch_s_outputs_on_a_padded_batch(backbone: nn.Module, grid: TokenGrid) -> None:
    torch.manual_seed(0)
    model = OnGrid(backbone, grid).eval()
    x = torch.randn(2, grid.prefix + grid.size, 16)
    mask = torch.ones(2, grid.prefix + grid.size, dtype=torch.bool)
    mask[1, grid.prefix + 13 * grid.width :] = False  # the second input ends 13 rows in
    with torch.no_grad():
        expected = model(x, mask).numpy()
    np.testing.assert_allclose(onnx_outputs(model, x, mask), expected, atol=TOLERANCE)


def test_avg_pool_divisor_override_is_lost_in_the_graph() -> None:
    """Why the grid CNNs count covered tokens by reshaping: the exporter drops avg_pool2d's
    divisor_override, so a window cut short by ceil_mode is averaged in the graph, summed in PyTorch."""

    class Sums(nn.Module):
        def forward(self, keep: torch.Tensor) -> torch.Tensor:
            return F.avg_pool2d(keep, (4, 3), ceil_mode=True, divisor_override=1)

    keep = torch.ones(1, 1, 21, 16)
    expected = Sums()(keep).numpy()
    assert np.abs(onnx_outputs(Sums(), keep) - expected).max() > 1.0
