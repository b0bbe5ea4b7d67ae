"""The pretraining behind a self-pretrained arm: the arm's pretraining preset on the inputs of the very
fraction it then fine-tunes on, labels dropped, at the protocol's width; one export per (modality,
fraction), made once and reused on resume (the pretraining benchmark's `Pretrainings`)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.curves.early_stopped_run import RunKey
from benchmarks.curves.plan import Arm, Protocol
from benchmarks.evidence.pretraining_bench import PretrainingBudget, Pretrainings, PretrainingTask


def pretraining_export(root: Path, folder: Path, arm: Arm, key: RunKey, protocol: Protocol) -> str:
    if arm.pretrain is None:
        raise ValueError(f"arm {arm.name} names no pretraining preset")
    task = PretrainingTask(
        name=key.modality,
        config=arm.config,
        pretrain=arm.pretrain,
        baseline="",
        data_overrides=tuple((name, str(value)) for name, value in protocol.data.items()),
    )
    budget = PretrainingBudget(
        learning_rates=protocol.rates,
        seeds=(protocol.seeds[0],),
        fractions=arm.fractions_of(protocol),
        finetune_steps=protocol.min_steps,
        pretrain_steps=arm.pretrain_steps,
        backbone_args=("--model.init_args.backbone.init_args.config.dim", str(protocol.width)),
    )
    return str(Pretrainings(root, folder, budget).get(task, "self", key.fraction)["export"])
