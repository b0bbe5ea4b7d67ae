"""A continuous-depth run logs its solver's function evaluations with every step; other backbones log none."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import pytorch_lightning as pl
import torch
from pytorch_lightning.loggers import CSVLogger
from torch import nn

from tabrasa.backbone import Encoder, EncoderConfig, ODEConfig, ODEEncoder
from tabrasa.training.nfe_log import FunctionEvaluationLog


class Tiny(pl.LightningModule):
    def __init__(self, backbone: nn.Module) -> None:
        super().__init__()
        self.backbone = backbone

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        loss = self.backbone(batch).pow(2).mean()
        self.log("train/loss", loss)  # so every run writes metrics.csv, with or without a solver
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def logged(backbone: nn.Module, tmp_path: Path) -> list[dict[str, str]]:
    data = torch.utils.data.DataLoader(torch.randn(4, 8, 16), batch_size=2)
    trainer = pl.Trainer(
        max_steps=2, logger=CSVLogger(tmp_path), callbacks=[FunctionEvaluationLog()], log_every_n_steps=1,
        enable_progress_bar=False, enable_checkpointing=False, enable_model_summary=False,
    )  # fmt: skip
    trainer.fit(Tiny(backbone), data)
    with (Path(trainer.log_dir) / "metrics.csv").open() as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize(("method", "steps", "nfe"), [("rk4", 2, 8.0), ("euler", 3, 3.0)])
def test_every_step_logs_the_solver_evaluations(tmp_path: Path, method: str, steps: int, nfe: float) -> None:
    rows = logged(ODEEncoder(ODEConfig(dim=16, heads=2, method=method, steps=steps)), tmp_path)
    values = [float(r["train/backbone/nfe"]) for r in rows if r.get("train/backbone/nfe")]
    assert values == [nfe, nfe]
    totals = [float(r["train/backbone/nfe_total"]) for r in rows if r.get("train/backbone/nfe_total")]
    assert totals == [nfe, 2 * nfe]  # cumulative


def test_counter_a_backbone_without_a_solver_logs_no_evaluations(tmp_path: Path) -> None:
    rows = logged(Encoder(EncoderConfig(dim=16, depth=1, heads=2)), tmp_path)
    assert rows and not any(key.endswith("nfe") for row in rows for key in row)
