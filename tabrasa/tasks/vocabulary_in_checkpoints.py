"""The Lightning hooks that keep a task's learned vocabularies in its checkpoints and put them back.

Every task with a tokenizer mixes this in and names its tokenizers (`vocabulary_tokenizers`): one for a
single-task or pretraining run, one per task for a joint run. What is kept and why is
tabrasa/tokenizers/vocabulary_record.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabrasa.tokenizers.vocabulary_record import CHECKPOINT_KEY, restore_vocabularies, vocabulary_record


class VocabularyInCheckpoints:
    """Mixin for LightningModules: `vocabulary_tokenizers()` → {name: tokenizer}."""

    def vocabulary_tokenizers(self) -> Mapping[str, object]:
        raise NotImplementedError

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        records = {name: vocabulary_record(t) for name, t in self.vocabulary_tokenizers().items()}
        kept = {name: record for name, record in records.items() if record is not None}
        if kept:
            checkpoint[CHECKPOINT_KEY] = kept

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        restore_vocabularies(self, checkpoint, "the checkpoint")
