"""How many different vocabularies repeated trainings on the same texts give: Hugging Face's trainer alone
against `tabrasa.tokenizers.train_subword_tokenizer`, which lists the word-internal pieces first
(tabrasa/tokenizers/trainer_order.py). Counts distinct token sets and distinct token→id maps.

    python -m benchmarks.bench_vocabulary_order --out results/tokenizers/vocabulary_order.json
    python -m benchmarks.bench_vocabulary_order --smoke      # a tiny corpus, 3 trainings
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, normalizers, pre_tokenizers, trainers

from benchmarks.bench_common import command_line, write_json
from tabrasa.tokenizers.text import SPECIALS, train_subword_tokenizer


def library_only(texts: list[str], kind: str, size: int) -> HFTokenizer:
    """What train_subword_tokenizer did before it listed the pieces: the library's trainer as documented."""
    if kind == "wordpiece":
        tokenizer = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
        trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=SPECIALS)
    else:
        tokenizer = HFTokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
        trainer = trainers.BpeTrainer(vocab_size=size, special_tokens=SPECIALS, end_of_word_suffix="</w>")
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return tokenizer


def distinct(train: Callable[[], HFTokenizer], trainings: int) -> dict[str, int]:
    vocabularies = [train().get_vocab() for _ in range(trainings)]
    return {
        "distinct_token_sets": len({tuple(sorted(v)) for v in vocabularies}),
        "distinct_id_maps": len({tuple(sorted(v.items())) for v in vocabularies}),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reviews", type=int, default=2000, help="IMDB training reviews to train on")
    p.add_argument("--vocab-size", type=int, default=8000)
    p.add_argument("--trainings", type=int, default=12)
    p.add_argument("--smoke", action="store_true", help="a tiny corpus, 3 trainings")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    if args.smoke:
        texts = [f"the film number {i} was {'good' if i % 2 else 'bad'}, truly {i * 7}" for i in range(60)]
        args.vocab_size, args.trainings, corpus = 80, 3, "60 generated sentences"
    else:
        from tabrasa.data.imdb import imdb_splits

        texts = list(imdb_splits(0)["train"]["text"][: args.reviews])
        corpus = f"the first {len(texts)} IMDB training reviews (tabrasa.data.imdb, split seed 0)"
    rows = []
    for kind in ("wordpiece", "bpe"):
        for trainer, train in (
            ("tokenizers alone", lambda k=kind: library_only(texts, k, args.vocab_size)),
            ("tabrasa", lambda k=kind: train_subword_tokenizer(texts, k, args.vocab_size)),  # type: ignore[arg-type]
        ):
            rows.append({"kind": kind, "trainer": trainer, **distinct(train, args.trainings)})
            print(json.dumps(rows[-1]), flush=True)
    result = {
        "command": command_line("benchmarks.bench_vocabulary_order", argv),
        "corpus": corpus,
        "vocab_size": args.vocab_size,
        "trainings": args.trainings,
        "rows": rows,
    }
    if args.out is not None:
        write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
