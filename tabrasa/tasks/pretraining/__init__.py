"""Self-supervised pretraining of the shared backbone: one objective a file, each a LightningModule that
`tabrasa fit` runs like any task, and the export of what it learned (see export.py)."""

from tabrasa.tasks.pretraining.clm import CausalLanguageModel
from tabrasa.tasks.pretraining.joint import JointPretraining
from tabrasa.tasks.pretraining.mlm import MaskedTokenModel
from tabrasa.tasks.pretraining.mpm import MaskedPatchModel

__all__ = ["CausalLanguageModel", "JointPretraining", "MaskedPatchModel", "MaskedTokenModel"]
