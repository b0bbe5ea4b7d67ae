"""Accuracy probes for the benchmarks: ListOps (long sequences) for the attention kinds, IMDB sentiment (real
reviews) for the cost of bf16. Small, CPU-sized runs: sizes are arguments, and the JSON records them.

ListOps is generated, so it trains the probe model with the synthetic tasks' loop; IMDB is a real dataset,
so it trains through `tabrasa fit`'s data module, task and Trainer (`cli_run.fit_and_score`)."""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from benchmarks.evidence.probe import Batch, ProbeModel
from benchmarks.evidence.synthetic_training import TrainConfig, epochs, train_batches
from benchmarks.listops import NUM_CLASSES, VOCAB, ListOpsDataset, ListOpsExample, collate, generate_listops
from tabrasa.backbone import AttentionConfig, Encoder, EncoderConfig, TokenGrid
from tabrasa.data.bucketing import LengthBucketBatchSampler, padding_fraction

IMDB_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "text" / "imdb.yaml"
CPU = torch.device("cpu")


def bucketed_batches(
    dataset: ListOpsDataset, batch_size: int, shuffle: bool, seed: int
) -> tuple[list[Batch], float]:
    sampler = LengthBucketBatchSampler(dataset.lengths, batch_size, shuffle=shuffle, seed=seed)
    indices = list(sampler)
    batches = []
    for batch in indices:
        collated = collate([dataset[i] for i in batch])
        batches.append(Batch(collated["input_ids"], collated["label"], mask=collated["mask"]))
    return batches, padding_fraction(indices, dataset.lengths)


def as_grid(batch: Batch, width: int) -> Batch:
    """Lay a CLS-led sequence out as rows of `width` tokens after the CLS (the strided layout of Child et
    al. 2019), padding the last row, so axial attention can run over a plain sequence."""
    n = batch.ids.shape[1] - 1
    rows = math.ceil(n / width)
    ids = F.pad(batch.ids, (0, 1 + rows * width - batch.ids.shape[1]))
    return Batch(ids, batch.label, mask=ids != 0, grid=TokenGrid(rows, width, prefix=1))


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
    *,
    num_train: int,
    num_test: int,
    min_length: int,
    max_length: int,
    dim: int,
    depth: int,
    heads: int,
    num_epochs: int,
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
        model = ProbeModel(Encoder(config), len(VOCAB), NUM_CLASSES, readout="first")
        if initial is None:
            initial = model.state_dict()
        model.load_state_dict(initial, strict=False)  # the same start for every kind (lowrank adds E, F)
        grid = attention.kind == "axial"
        kind_train = [as_grid(b, width) for b in train] if grid else train
        kind_test = [as_grid(b, width) for b in test] if grid else test
        fit = TrainConfig(steps=num_epochs * len(train), batch=batch_size, lr=lr, weight_decay=0.01)
        history = train_batches(model, epochs(kind_train, seed), fit, CPU, kind_test)
        run = {"accuracy": history.final_accuracy, "train_seconds": history.seconds}
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
            "epochs": num_epochs,
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


def bf16_accuracy_cost(smoke: bool = False, seeds: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    """IMDB trained and tested through `tabrasa fit`'s own pipeline (configs/text/imdb.yaml: its data module,
    tokenizer, classifier and Trainer) at precision 32-true and at bf16-mixed, same data, steps and seed."""
    from benchmarks.evidence.cli_run import fit_and_score, quiet_lightning

    sizes = (
        {"limit": 64, "max_length": 32, "steps": 2}
        if smoke
        else {"limit": 3000, "max_length": 128, "steps": 188}
    )
    used = seeds[:1] if smoke else seeds
    precisions = {"fp32": "32-true", "bf16": "bf16-mixed"}
    quiet_lightning()
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in precisions}
    for seed in used:
        for name, precision in precisions.items():
            overrides = [
                "--seed_everything", str(seed),
                "--data.init_args.limit", str(sizes["limit"]),
                "--data.init_args.tokenizer.init_args.max_length", str(sizes["max_length"]),
                "--trainer.max_steps", str(sizes["steps"]),
                "--trainer.precision", precision,
            ]  # fmt: skip
            runs[name].append(fit_and_score(IMDB_CONFIG, overrides))
    mean = {p: sum(float(r["test_acc"]) for r in rs) / len(rs) for p, rs in runs.items()}
    seconds = {p: sum(float(r["train_seconds"]) for r in rs) for p, rs in runs.items()}
    return {
        "task": "IMDB sentiment through configs/text/imdb.yaml, binary",
        **sizes,
        "seeds": list(used),
        "accuracy": {p: [float(r["test_acc"]) for r in rs] for p, rs in runs.items()},
        "mean_accuracy": mean,
        "bf16_minus_fp32": mean["bf16"] - mean["fp32"],
        "train_speedup_bf16": seconds["fp32"] / seconds["bf16"],
    }
