"""What the learning-curve benchmark compares: per modality, the task config and the backbones (arms).

Every arm reuses the modality's shipped YAML config unchanged except for the backbone, so tokenizer,
head, data and trainer are identical and only the inductive bias differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tabrasa.evidence.rate_sweep import Budget


@dataclass(frozen=True, kw_only=True)
class Modality:
    """config: the task YAML under configs/. baselines: backbone YAMLs under configs/backbone/ (the
    transformer is small.yaml); quick_baselines: the subset run in quick modes. quick_data: data
    overrides in quick modes (e.g. shorter sequences)."""

    name: str
    config: str
    baselines: tuple[str, ...]
    quick_baselines: tuple[str, ...]
    quick_data: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not set(self.quick_baselines) <= set(self.baselines):
            raise ValueError(
                f"Modality {self.name!r}: quick_baselines={self.quick_baselines} must be a subset of "
                f"baselines={self.baselines}"
            )


MODALITIES = {
    "text": Modality(
        name="text",
        config="configs/text/imdb.yaml",
        baselines=("sequence_cnn", "sequence_lstm"),
        quick_baselines=("sequence_cnn",),
        quick_data={"max_length": 128},
    ),
    "image": Modality(
        name="image",
        config="configs/image/fashion_mnist.yaml",
        baselines=("grid_cnn",),
        quick_baselines=("grid_cnn",),
    ),
    "audio": Modality(
        name="audio",
        config="configs/audio/keywords.yaml",
        baselines=("grid_cnn",),
        quick_baselines=("grid_cnn",),
    ),
    "protein": Modality(
        name="protein",
        config="configs/protein/psortb.yaml",
        baselines=("sequence_cnn", "sequence_lstm"),
        quick_baselines=("sequence_cnn",),  # the config's tokenizer already crops to 256 residues
    ),
}
TRANSFORMER = "small"


@dataclass(frozen=True, kw_only=True)
class Sweep(Budget):
    """One learning-curve mode: a budget plus the training fractions, each a share of the train split;
    steps are equal at every fraction (equal compute, not equal epochs)."""

    fractions: tuple[float, ...]

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.fractions or not all(0 < f <= 1 for f in self.fractions):
            raise ValueError(f"Sweep.fractions={self.fractions}: give shares of the train split in (0, 1]")
        if list(self.fractions) != sorted(set(self.fractions)):
            raise ValueError(f"Sweep.fractions={self.fractions} must increase, each listed once")


SWEEPS = {
    "smoke": Sweep(
        fractions=(0.5, 1.0),
        learning_rates=(1e-3,),
        seeds=(0, 1),
        steps=2,
        limit=48,
        batch_size=16,
        quick=True,
    ),
    "quick": Sweep(
        fractions=(0.1, 0.3, 1.0),
        learning_rates=(1e-3, 3e-3),
        seeds=(0, 1),
        steps=60,
        limit=1500,
        batch_size=32,
        quick=True,
    ),
    "full": Sweep(
        fractions=(0.01, 0.03, 0.1, 0.3, 1.0),
        learning_rates=(3e-4, 1e-3, 3e-3),
        seeds=(0, 1, 2),
        steps=3000,
        limit=None,
        batch_size=64,
        quick=False,
    ),
}
