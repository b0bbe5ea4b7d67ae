"""A run's trained subword vocabulary, kept in its checkpoints, so the weights never meet other ids.

A SubwordTokenizer learns its vocabulary on the training texts and caches it under $TABRASA_CACHE, not in
the run folder. Rebuilt anywhere else (another machine, a cleared cache, a vocabulary trained by an older
tabrasa whose ids came out in another order: tabrasa/tokenizers/trainer_order.py), the run would get a
vocabulary retrained from the data, and its embedding rows would be read under ids they never had: no
error, only wrong predictions. Every checkpoint of a task therefore carries its learned vocabularies
(the `tokenizers` JSON, about 0.5 MB at 16,000 entries), and restoring the checkpoint puts it back in
place of whatever the cache gave (the hooks: tabrasa/tasks/vocabulary_in_checkpoints.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from pytorch_lightning.utilities import rank_zero_info
from tokenizers import Tokenizer as HFTokenizer

from tabrasa.tokenizers.learned_vocabulary import SubwordTokenizer

CHECKPOINT_KEY = "tabrasa_vocabulary"


def vocabulary_sha256(tokenizer: HFTokenizer) -> str:
    """The token → id map's digest: what the embedding rows are indexed by."""
    pairs = "\n".join(
        f"{index}\t{token}" for token, index in sorted(tokenizer.get_vocab().items(), key=lambda p: p[1])
    )
    return hashlib.sha256(pairs.encode()).hexdigest()


def vocabulary_record(tokenizer: object) -> dict[str, Any] | None:
    """What a checkpoint keeps of `tokenizer`: a learned vocabulary's JSON and digest; None for tokenizers
    that learned nothing or were given their vocabulary as a file (the config names that file)."""
    if not isinstance(tokenizer, SubwordTokenizer) or tokenizer.path is not None or not tokenizer.fitted:
        return None
    return {"sha256": vocabulary_sha256(tokenizer.hf), "tokenizer_json": tokenizer.hf.to_str()}


def restore_vocabulary(tokenizer: object, record: dict[str, Any] | None, source: str) -> bool:
    """Put the checkpoint's vocabulary into `tokenizer` where it differs (or is not fitted yet); True when
    it was replaced. `source` names the checkpoint in the message."""
    if record is None or not isinstance(tokenizer, SubwordTokenizer):
        return False
    if tokenizer.fitted and vocabulary_sha256(tokenizer.hf) == record["sha256"]:
        return False
    saved = HFTokenizer.from_str(record["tokenizer_json"])
    if vocabulary_sha256(saved) != record["sha256"]:
        raise ValueError(f"{source}: its vocabulary does not match its own digest; the file is damaged")
    if tokenizer.fitted and saved.get_vocab_size() != tokenizer.vocab_size:
        raise ValueError(
            f"{source} was trained with {saved.get_vocab_size()} vocabulary entries, the config builds "
            f"{tokenizer.vocab_size}; pass the config the run was trained with"
        )
    if tokenizer.fitted:
        rank_zero_info(f"{source}: using the vocabulary the run was trained with, not the cache's other one")
    tokenizer.use_vocabulary(saved)
    return True


def restore_vocabularies(model: object, checkpoint: Mapping[str, Any], source: str) -> int:
    """Put each vocabulary `checkpoint` keeps into `model`'s tokenizer of that name (a task's
    `vocabulary_tokenizers()`); how many were replaced. A model without that method, or a checkpoint
    without records (an earlier tabrasa's), changes nothing."""
    named = getattr(model, "vocabulary_tokenizers", None)
    if named is None:
        return 0
    tokenizers, records = named(), checkpoint.get(CHECKPOINT_KEY) or {}
    replaced = [
        restore_vocabulary(tokenizers.get(name), kept, f"{source} ({name})") for name, kept in records.items()
    ]
    return sum(replaced)
