"""The one loop of the synthetic benchmarks trains, counts its steps, and the probe reads the right token."""

from __future__ import annotations

import itertools

import pytest
import torch

from benchmarks.evidence.models import Shape
from benchmarks.evidence.probe import Batch, ProbeModel
from benchmarks.evidence.synthetic_tasks import FirstTokensTask
from benchmarks.evidence.synthetic_training import EVAL_BATCH, HeldOut, Stage, TrainConfig, epochs, train
from tabrasa.backbone import SequenceLSTM

CPU = torch.device("cpu")


def test_train_learns_a_short_dependency_and_an_untrained_model_does_not() -> None:
    task = FirstTokensTask(length=4, signal=1, classes=4, noise_vocab=4)
    config = TrainConfig(steps=60, batch=32, lr=3e-3, eval_every=20, eval_batches=4)
    torch.manual_seed(0)
    model = ProbeModel(Shape(dim=32, depth=1, heads=2).encoder(task.length), task.vocab_size, task.classes)
    untrained = train(model, task, TrainConfig(steps=1, batch=32, lr=1e-6), seed=0, device=CPU)
    history = train(model, task, config, seed=0, device=CPU)
    assert untrained.final_accuracy < 0.5  # four classes: chance is 0.25
    assert history.final_accuracy > 0.95
    assert len(history.losses) == 60 and [s for s, _ in history.evals] == [20, 40, 60]
    assert history.seconds > 0 and not history.diverged


def test_readout_first_and_last_read_different_tokens() -> None:
    # An LSTM is causal within a direction, so the two ends see different context: the logits must differ.
    ids = torch.tensor([[1, 2, 3, 4]])
    torch.manual_seed(0)
    last = ProbeModel(SequenceLSTM(16, 1, dropout=0.0), vocab_size=5, classes=3, readout="last")
    first = ProbeModel(SequenceLSTM(16, 1, dropout=0.0), vocab_size=5, classes=3, readout="first")
    first.load_state_dict(last.state_dict())
    batch = Batch(ids, torch.tensor([0]))
    assert not torch.allclose(first(batch), last(batch))
    with pytest.raises(ValueError, match="readout='middle'"):
        ProbeModel(SequenceLSTM(16, 1, dropout=0.0), vocab_size=5, classes=3, readout="middle")  # type: ignore[arg-type]


def test_epochs_visit_every_batch_once_per_epoch_in_a_seeded_order() -> None:
    batches = [Batch(torch.tensor([[i]]), torch.tensor([i])) for i in range(5)]
    first_two = [int(b.label) for b in itertools.islice(epochs(batches, seed=3), 10)]
    assert sorted(first_two[:5]) == sorted(first_two[5:]) == [0, 1, 2, 3, 4]
    assert first_two == [int(b.label) for b in itertools.islice(epochs(batches, seed=3), 10)]


def test_train_config_is_keyword_only_and_names_the_bad_field() -> None:
    with pytest.raises(TypeError):
        TrainConfig(4000, 256, 2e-3)  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"TrainConfig\.steps=0 must be >= 1"):
        TrainConfig(steps=0, batch=8)
    with pytest.raises(ValueError, match=r"TrainConfig\.precision='fp8'"):
        TrainConfig(steps=1, batch=8, precision="fp8")  # type: ignore[arg-type]


class _Recording:
    """A task that remembers the lengths of the batches drawn from it."""

    def __init__(self, length: int) -> None:
        self.task = FirstTokensTask(length=length, signal=1, classes=4, noise_vocab=4)
        self.drawn: list[int] = []

    @property
    def vocab_size(self) -> int:
        return self.task.vocab_size

    @property
    def classes(self) -> int:
        return self.task.classes

    def sample(self, batch_size: int, generator: torch.Generator) -> Batch:
        batch = self.task.sample(batch_size, generator)
        self.drawn.append(batch.ids.shape[1])
        return batch


def test_a_curriculum_trains_its_stages_first_in_one_run_and_scores_each_stage() -> None:
    short, middle, measured = _Recording(4), _Recording(6), _Recording(8)
    config = TrainConfig(steps=3, batch=8, eval_batches=1, test_examples=64)
    torch.manual_seed(0)
    model = ProbeModel(Shape(dim=32, depth=1, heads=2).encoder(8), measured.vocab_size, measured.classes)
    stages = (Stage(task=short, steps=2), Stage(task=middle, steps=4))  # type: ignore[arg-type]
    test = HeldOut.of(measured, config).test  # type: ignore[arg-type]
    history = train(model, measured, config, seed=0, device=CPU, test_set=test, curriculum=stages)  # type: ignore[arg-type]
    assert len(history.losses) == 2 + 4 + 3  # one run: the stages' steps, then the task's
    # Training batches (of 8) come from each stage in turn; the stage's test set (64 examples) after it.
    assert short.drawn == [4, 4, 4]  # two steps, then its test set of one EVAL_BATCH batch
    assert middle.drawn == [6] * 5
    assert len(history.stages) == 2 and [len(s) for s in history.stages] == [64, 64]
    assert history.test_correct is not None and history.test_correct.shape == (64,)
    assert history.final_test == pytest.approx(history.test_correct.float().mean().item())
    with pytest.raises(ValueError, match=r"Stage\.steps=0"):
        Stage(task=short, steps=0)  # type: ignore[arg-type]


def test_the_test_set_holds_at_least_test_examples_in_whole_eval_batches() -> None:
    task = FirstTokensTask(length=4, signal=1, classes=4, noise_vocab=4)
    held_out = HeldOut.of(task, TrainConfig(steps=1, batch=16, eval_batches=2, test_examples=1000))
    assert sum(len(b.label) for b in held_out.validation) == 32
    assert sum(len(b.label) for b in held_out.test) == -(-1000 // EVAL_BATCH) * EVAL_BATCH >= 1000
