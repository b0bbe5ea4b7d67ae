"""What the learning-curve benchmark compares: per modality, the task config and the backbones (arms).

Every arm reuses the modality's shipped YAML config unchanged except for the backbone, so tokenizer,
head, data and trainer are identical and only the inductive bias differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks.evidence.rate_sweep import Budget

ESM = "tabrasa.tokenizers.esm.EsmProteinTokenizer"


@dataclass(frozen=True, kw_only=True)
class StandardPlan:
    """What the standard mode (sized for 2 CPU cores; its measured cost is in the README) runs for one
    modality: optimizer steps and batch size of every run, data overrides (dotted keys under
    data.init_args), the steps of the self-pretraining run behind the `self_pretrained` arm (the
    modality's pretraining preset), and `width`: every arm's hidden width, the self-pretrained one's
    pretraining included (None keeps the backbone YAMLs' 128)."""

    steps: int
    batch_size: int
    data: dict[str, object] = field(default_factory=dict)
    pretrain_steps: int = 500
    width: int | None = None

    def __post_init__(self) -> None:
        if self.width is not None and self.width < 8:
            raise ValueError(f"StandardPlan.width={self.width}: give a hidden width >= 8, or None for 128")


# Where each backbone YAML keeps its hidden width (what StandardPlan.width overrides): the transformer's
# sits in its EncoderConfig, each baseline takes it as a constructor argument.
WIDTH_KEYS = {
    "small": "config.dim",
    "sequence_cnn": "dim",
    "sequence_lstm": "dim",
    "grid_cnn": "dim",
}


# The fixed-step sweeps' committed logs name the patch-grid CNN by its old arm name, grid_cnn; its config is
# configs/backbone/patch_grid_cnn.yaml since the class became PatchGridCNN.
BACKBONE_FILES = {"grid_cnn": "patch_grid_cnn.yaml"}


def backbone_file(root: Path, arm: str) -> Path:
    """The backbone YAML an arm of the fixed-step sweeps runs."""
    return root / "configs" / "backbone" / BACKBONE_FILES.get(arm, f"{arm}.yaml")


def width_args(backbone: str, width: int | None) -> list[str]:
    """The CLI overrides that set `backbone`'s hidden width (none for width None)."""
    if width is None:
        return []
    if backbone not in WIDTH_KEYS:
        raise ValueError(f"backbone {backbone!r} has no width key: add it to arms.WIDTH_KEYS")
    return [f"--model.init_args.backbone.init_args.{WIDTH_KEYS[backbone]}", str(width)]


@dataclass(frozen=True, kw_only=True)
class Modality:
    """config: the task YAML under configs/. baselines: backbone YAMLs under configs/backbone/ (the
    transformer is small.yaml); quick_baselines: the subset run in quick modes. quick_data: data
    overrides in quick modes (e.g. shorter sequences). pretrain: the pretraining preset the
    self-pretrained arm runs on the same fraction's inputs. standard: the standard mode's plan; wide: the
    plan it had when first sized (every arm 128 wide), kept so its committed curves rerun (`--wide`).
    floor: what the best arm must clear at full data for a curve to count as evidence — `majority` (15
    points above the majority class) or `chance` (10× chance, for many balanced classes)."""

    name: str
    config: str
    baselines: tuple[str, ...]
    quick_baselines: tuple[str, ...]
    quick_data: dict[str, object] = field(default_factory=dict)
    pretrain: str = ""
    standard: StandardPlan | None = None
    wide: StandardPlan | None = None
    floor: str = "majority"

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
        quick_data={"tokenizer.init_args.max_length": 128},
        pretrain="configs/pretrain/text.yaml",
        # 128 WordPiece tokens (head and tail) keep most of a review's sentiment at half the cost of 256;
        # 5,000 reviews per split bound the scoring time of every run. 200 steps: at 128 wide and 300 steps
        # the arms cleared the 65% floor by 17 points for 1.8 h of the 3 (results/standard_cost/wide/);
        # 64 wide, the LSTM reached 77.0% at 200 steps (results/standard_calibration/width64.jsonl).
        standard=StandardPlan(
            steps=200, batch_size=32, data={"tokenizer.init_args.max_length": 128, "limit": 5000}, width=64
        ),
        wide=StandardPlan(
            steps=300, batch_size=32, data={"tokenizer.init_args.max_length": 128, "limit": 5000}
        ),
    ),
    "image": Modality(
        name="image",
        config="configs/image/fashion_mnist.yaml",
        baselines=("grid_cnn",),
        quick_baselines=("grid_cnn",),
        pretrain="configs/pretrain/image.yaml",
        standard=StandardPlan(steps=300, batch_size=64, data={"limit": 10000}, width=64),
        wide=StandardPlan(steps=300, batch_size=64, data={"limit": 10000}),
    ),
    "audio": Modality(
        name="audio",
        config="configs/audio/keywords.yaml",
        baselines=("grid_cnn",),
        quick_baselines=("grid_cnn",),
        pretrain="configs/pretrain/audio.yaml",
        # 600 steps: 64 wide at 300 the GridCNN ended at 28.9% at full data, on its floor (28.6%), below
        # its 35.2% at 10% (results/standard_calibration/keywords_300_steps_runs.jsonl): too few steps.
        standard=StandardPlan(steps=600, batch_size=64, width=64),
        wide=StandardPlan(steps=600, batch_size=64),
        floor="chance",
    ),
    "protein": Modality(
        name="protein",
        config="configs/protein/psortb.yaml",
        baselines=("sequence_cnn", "sequence_lstm"),
        quick_baselines=("sequence_cnn",),  # the config's tokenizer already crops to 256 residues
        pretrain="configs/pretrain/protein.yaml",
        # The ESM alphabet in every arm, so the self-pretrained arm's token table is the one it fine-tunes.
        # The floor (69.1% majority + 15 = 84.1%) sized the rest (results/standard_calibration/, the
        # SequenceCNN at lr 3e-3): 64 residues (head and tail) reach 81.5% test at 1,000 steps, 128
        # reach 85.5% at 1,000 steps in 402 s, 256 reach 86.9% at 1,500 steps in 993 s. 128 residues
        # keep both termini, where the sorting signals sit, at half the cost of 256.
        # 1,000 steps, where the floor binds: 128 wide these arms cost 3.1 h alone; 64 wide the SequenceCNN
        # reached 85.6%, 85.6%, 85.4% over three seeds at 1,000 steps and 84.5%, 84.2%, 84.5% at 800
        # (results/standard_calibration/width64.jsonl), and a sweep at 600 steps ended with its best arm
        # at full data below the floor (psortb_600_steps_runs.jsonl there).
        standard=StandardPlan(
            steps=1000,
            batch_size=32,
            data={"tokenizer.class_path": ESM, "tokenizer.init_args.max_length": 128},
            width=64,
        ),
        wide=StandardPlan(
            steps=1000,
            batch_size=32,
            data={"tokenizer.class_path": ESM, "tokenizer.init_args.max_length": 128},
        ),
    ),
}
PLANS = ("standard", "wide")  # the Modality attributes a Sweep.plan may name
# The standard plans above run every arm 64 wide: at 128 (the wide plans) the sweep cost 6.2 h on two idle
# cores, at 64 its plan prices at 2.65 h over the same runs (results/standard_cost/projected/).
TRANSFORMER = "small"
SELF_PRETRAINED = "self_pretrained"  # the transformer after masked modelling on the fraction's own inputs


@dataclass(frozen=True, kw_only=True)
class Sweep(Budget):
    """One learning-curve mode: a budget plus the training fractions, each a share of the train split;
    steps are equal at every fraction (equal compute, not equal epochs). plan: which StandardPlan of each
    modality (its `standard` or `wide` attribute) sets steps, batch size, data and width; None runs the
    budget as given. self_pretrained: add the self-pretrained arm."""

    fractions: tuple[float, ...]
    plan: str | None = None
    self_pretrained: bool = False

    @property
    def standard(self) -> bool:
        return self.plan is not None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.plan not in (None, *PLANS):
            raise ValueError(f"Sweep.plan={self.plan!r}: name one of {PLANS}, or None")
        if not self.fractions or not all(0 < f <= 1 for f in self.fractions):
            raise ValueError(f"Sweep.fractions={self.fractions}: give shares of the train split in (0, 1]")
        if list(self.fractions) != sorted(set(self.fractions)):
            raise ValueError(f"Sweep.fractions={self.fractions} must increase, each listed once")


# Sized for 3 hours on 2 CPU cores (two runs at a time on one thread each; results/standard_cost/ prices
# every logged run at its idle cost): 4 fractions over 1.5 orders of magnitude, 3 seeds, two rates
# bracketed by up to four more each. A rate still best at an edge after one extension gets another, up to
# four: at two extensions the keywords GridCNN at 10% and 30%, the IMDB LSTM at full data and the PSORTb
# SequenceCNN at full data were still best at 0.027, so their curves were not bracketed; at three the IMDB
# LSTM was still best at 0.081.
STANDARD = Sweep(
    fractions=(0.03, 0.1, 0.3, 1.0),
    learning_rates=(1e-3, 3e-3),
    seeds=(0, 1, 2),
    steps=300,  # each modality's StandardPlan overrides steps and batch size
    limit=None,
    batch_size=32,
    quick=False,
    plan="standard",
    self_pretrained=True,
    bracket=4,
)

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
    "standard": STANDARD,
    # The standard mode as first sized, every arm 128 wide (6.2 h on 2 idle cores, results/standard_cost/):
    # the same fractions, seeds and rate protocol; results/generalization_wide/ holds its curves.
    "wide": replace(STANDARD, plan="wide", bracket=2),  # the bracket it ran with: its log replays as it was
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
