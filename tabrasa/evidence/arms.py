"""What the learning-curve benchmark compares: per modality, the task config and the backbones (arms).

Every arm reuses the modality's shipped YAML config unchanged except for the backbone, so tokenizer,
head, data and trainer are identical and only the inductive bias differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Modality:
    name: str
    config: str  # task YAML under configs/
    baselines: tuple[str, ...]  # backbone YAMLs under configs/backbone/ (the transformer is small.yaml)
    quick_baselines: tuple[str, ...]  # the subset run in --quick mode
    data_overrides: dict[str, object] = field(default_factory=dict)  # e.g. shorter sequences in quick mode


MODALITIES = {
    "text": Modality(
        "text",
        "configs/text/imdb.yaml",
        ("sequence_cnn", "sequence_lstm"),
        ("sequence_cnn",),
        {"max_length": 128},
    ),
    "image": Modality("image", "configs/image/fashion_mnist.yaml", ("grid_cnn",), ("grid_cnn",)),
    "audio": Modality("audio", "configs/audio/keywords.yaml", ("grid_cnn",), ("grid_cnn",)),
    "protein": Modality(
        "protein",
        "configs/protein/psortb.yaml",
        ("sequence_cnn", "sequence_lstm"),
        ("sequence_cnn",),  # the config's tokenizer already crops to 256 residues
    ),
}
TRANSFORMER = "small"


@dataclass(frozen=True)
class Sweep:
    """One benchmark mode: how much data, which fractions, rates, seeds and how many optimizer steps."""

    fractions: tuple[float, ...]
    learning_rates: tuple[float, ...]
    seeds: tuple[int, ...]
    steps: int  # optimizer steps per run, equal for every fraction: equal compute, not equal epochs
    limit: int | None  # examples kept per split before fractioning (None = all)
    batch_size: int
    quick: bool


SWEEPS = {
    "smoke": Sweep((0.5, 1.0), (1e-3,), (0, 1), 2, 48, 16, True),
    "quick": Sweep((0.1, 0.3, 1.0), (1e-3, 3e-3), (0, 1), 60, 1500, 32, True),
    "full": Sweep((0.01, 0.03, 0.1, 0.3, 1.0), (3e-4, 1e-3, 3e-3), (0, 1, 2), 3000, None, 64, False),
}
