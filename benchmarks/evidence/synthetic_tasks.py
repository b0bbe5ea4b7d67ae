"""Synthetic tasks whose answers depend on known tokens only, so each claim tests one ability.

Every task draws batches from its own `torch.Generator`, so a seed fixes the data stream, and reserves
id 0 as padding (the embedder's padding row). Labels are read by the model at the *last* token. Each
task has `sample(batch_size, generator) -> Batch`, `vocab_size` and `classes`: what
`synthetic_training.train` and `ProbeModel` need.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import torch

from benchmarks.evidence.probe import PAD, Batch


def _check_positive(task: str, **values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise ValueError(f"{task}.{name}={value} must be >= 1: set it to a positive count")


@dataclass(frozen=True, kw_only=True)
class FirstTokensTask:
    """The first `signal` tokens all spell the label (one of `classes` ids); the `length - signal` tokens
    after them are uniform noise from a disjoint vocabulary. Read at the last token, the answer lies at
    least `length - signal` tokens back: the long-range dependency of the copy-memory problem (Hochreiter &
    Schmidhuber 1997; Arjovsky et al. 2016) at the length of Long Range Arena (Tay et al. 2021). Repeating
    the label over a block keeps it findable by a small model in few steps; the distance stays the same.
    """

    length: int = 1024
    signal: int = 1
    classes: int = 4
    noise_vocab: int = 16

    def __post_init__(self) -> None:
        _check_positive("FirstTokensTask", length=self.length, signal=self.signal, classes=self.classes)
        _check_positive("FirstTokensTask", noise_vocab=self.noise_vocab)
        if self.signal >= self.length:
            raise ValueError(
                f"FirstTokensTask.signal={self.signal} must be < length={self.length} so noise separates "
                f"the signal from the last token"
            )

    @property
    def vocab_size(self) -> int:
        return 1 + self.classes + self.noise_vocab  # pad, signal ids 1..classes, noise ids after

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        label = torch.randint(0, self.classes, (batch_size,), generator=generator)
        noise_shape = (batch_size, self.length - self.signal)
        noise = torch.randint(0, self.noise_vocab, noise_shape, generator=generator)
        ids = torch.cat([1 + label[:, None].expand(-1, self.signal), 1 + self.classes + noise], dim=1)
        return Batch(ids, label)


@dataclass(frozen=True, kw_only=True)
class RecallTask:
    """Associative recall (Ba et al. 2016; Schlag et al. 2021): `pairs` positions each hold one key and its
    value (two ids whose embeddings add up), then a query position holds `queries` keys (1 or 2, the second
    from its own id range so the two are ordered). The label is the value stored under the query key, or
    for two queries the ordered pair of values (value_a · values + value_b). Keys within a sequence are
    distinct. One key-value pair per position makes recall one attention hop: finding a token by content.

    Ids per position (B, N, 2): pairs (key, value), query (key_a, second-key_b or PAD).
    """

    pairs: int = 8
    keys: int = 32
    values: int = 16
    queries: int = 1

    def __post_init__(self) -> None:
        _check_positive("RecallTask", pairs=self.pairs, keys=self.keys, values=self.values)
        if self.pairs > self.keys:
            raise ValueError(f"RecallTask.pairs={self.pairs} needs at least as many keys, got {self.keys}")
        if self.queries not in (1, 2) or self.queries > self.pairs:
            raise ValueError(f"RecallTask.queries={self.queries} must be 1 or 2 and at most pairs")

    @property
    def length(self) -> int:
        return self.pairs + 1

    @property
    def vocab_size(self) -> int:
        return 1 + self.keys + self.values + self.keys  # pad, keys, values, second-query keys

    @property
    def classes(self) -> int:
        return self.values**self.queries

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        order = torch.rand(batch_size, self.keys, generator=generator).argsort(dim=1)
        keys = order[:, : self.pairs]  # (B, pairs): distinct keys per row
        values = torch.randint(0, self.values, (batch_size, self.pairs), generator=generator)
        slots = torch.rand(batch_size, self.pairs, generator=generator).argsort(dim=1)[:, : self.queries]
        asked, answers = keys.gather(1, slots), values.gather(1, slots)  # (B, queries)
        stored = torch.stack([1 + keys, 1 + self.keys + values], dim=2)  # (B, pairs, 2)
        query = torch.full((batch_size, 1, 2), PAD)
        query[:, 0, 0] = 1 + asked[:, 0]
        if self.queries == 2:
            query[:, 0, 1] = 1 + self.keys + self.values + asked[:, 1]
            return Batch(torch.cat([stored, query], dim=1), answers[:, 0] * self.values + answers[:, 1])
        return Batch(torch.cat([stored, query], dim=1), answers[:, 0])


@dataclass(frozen=True, kw_only=True)
class RandomPairsTask:
    """A fixed table of `size` random key sequences (`length` tokens from `vocab` ids) with random labels:
    nothing generalises, so the share recalled after training counts what the weights memorised
    (Zhang et al. 2017; Mahdavi et al. 2023 for attention's memorisation capacity).
    """

    size: int = 1024
    length: int = 8
    vocab: int = 16
    classes: int = 16
    seed: int = 0

    def __post_init__(self) -> None:
        _check_positive("RandomPairsTask", size=self.size, length=self.length, vocab=self.vocab)
        _check_positive("RandomPairsTask", classes=self.classes)

    @property
    def vocab_size(self) -> int:
        return 1 + self.vocab

    @cached_property
    def table(self) -> Batch:
        generator = torch.Generator().manual_seed(self.seed)
        ids = 1 + torch.randint(0, self.vocab, (self.size, self.length), generator=generator)
        return Batch(ids, torch.randint(0, self.classes, (self.size,), generator=generator))

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        rows = torch.randint(0, self.size, (batch_size,), generator=generator)
        return Batch(self.table.ids[rows], self.table.label[rows])
