"""Distillation: the loss is Hinton et al.'s, the teacher never trains and never leaves eval mode."""

from __future__ import annotations

import math

import pytest
import torch

from tabrasa.backbone import Encoder
from tabrasa.backbone.config import EncoderConfig
from tabrasa.errors import UserError
from tabrasa.tasks import Classifier
from tabrasa.tasks.distill import Distill, distillation_loss
from tabrasa.tokenizers import ProteinTokenizer, TextTokenizer
from tabrasa.tokenizers.text import train_subword_tokenizer


def encoder(dim: int, depth: int, dropout: float = 0.0) -> Encoder:
    return Encoder(EncoderConfig(dim=dim, depth=depth, heads=2, max_len=32, dropout=dropout))


def test_loss_matches_a_hand_computation() -> None:
    student = torch.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.0]])
    teacher = torch.tensor([[2.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    target = torch.tensor([0, 2])
    T, a, b = 2.0, 0.7, 0.3
    soft_terms, hard_terms = [], []
    for s, t, y in zip(student.tolist(), teacher.tolist(), target.tolist(), strict=True):
        ps = [math.exp(v / T) / sum(math.exp(u / T) for u in s) for v in s]
        pt = [math.exp(v / T) / sum(math.exp(u / T) for u in t) for v in t]
        soft_terms.append(sum(q * math.log(q / p) for p, q in zip(ps, pt, strict=True)))
        hard_terms.append(-math.log(math.exp(s[y]) / sum(math.exp(u) for u in s)))
    soft = T * T * sum(soft_terms) / 2
    hard = sum(hard_terms) / 2
    total, got_soft, got_hard = distillation_loss(student, teacher, target, T, a, b)
    assert got_soft.item() == pytest.approx(soft, rel=1e-5)
    assert got_hard.item() == pytest.approx(hard, rel=1e-5)
    assert total.item() == pytest.approx(a * soft + b * hard, rel=1e-5)


def test_the_soft_term_vanishes_when_the_student_copies_the_teacher() -> None:
    logits = torch.randn(4, 3)
    _, soft, _ = distillation_loss(logits, logits.clone(), torch.zeros(4, dtype=torch.long), 4.0, 1.0, 0.0)
    assert soft.item() == pytest.approx(0.0, abs=1e-6)


def test_a_training_step_trains_the_student_and_leaves_the_teacher_frozen_in_eval_mode() -> None:
    tokenizer = ProteinTokenizer(max_length=16)
    teacher = Classifier(tokenizer, 2, encoder(32, 2, dropout=0.5))  # wider and deeper, with dropout
    student = Distill(tokenizer, 2, encoder(16, 1), teacher="unused", temperature=2.0)
    student.set_teacher(teacher, tokenizer)
    before = {k: v.clone() for k, v in teacher.state_dict().items()}
    student_before = {k: v.clone() for k, v in student.state_dict().items()}
    batch = tokenizer.collate([{**tokenizer.encode(s), "label": torch.tensor(i % 2)}
                              for i, s in enumerate(["MKTAYIAK", "MSTN", "MKV", "MAAGG"])])  # fmt: skip
    optimizer = torch.optim.SGD(student.parameters(), lr=0.5)
    student.train()
    assert not teacher.training
    student.log = lambda *a, **k: None  # type: ignore[method-assign]  # no Trainer to log to
    student.log_dict = lambda *a, **k: None  # type: ignore[method-assign]
    loss = student.training_step(batch, 0)
    loss.backward()
    optimizer.step()
    assert all(torch.equal(before[k], v) for k, v in teacher.state_dict().items())
    assert not teacher.training and not any(m.training for m in teacher.modules())
    assert all(p.grad is None for p in teacher.parameters())
    assert any(not torch.equal(student_before[k], v) for k, v in student.state_dict().items())
    assert not any(k.startswith("teacher") or k.startswith("_teacher") for k in student.state_dict())


def test_teachers_with_another_vocabulary_or_label_set_are_refused() -> None:
    corpus = ["a good film", "a bad film"] * 4
    one = TextTokenizer(train_subword_tokenizer(corpus, vocab_size=40))
    other = TextTokenizer(train_subword_tokenizer([*corpus, "zebra xylophone quartz"], vocab_size=60))
    student = Distill(one, 2, encoder(16, 1), teacher="unused")
    with pytest.raises(UserError, match="tokenizer"):
        student.set_teacher(Classifier(other, 2, encoder(16, 1)), other)
    with pytest.raises(UserError, match="3 classes"):
        student.set_teacher(Classifier(one, 3, encoder(16, 1)), one)
    with pytest.raises(UserError, match="temperature"):
        Distill(one, 2, encoder(16, 1), teacher="unused", temperature=0.0)


class Wrapped(TextTokenizer):
    """What a pretrained family's tokenizer is to the check: a text tokenizer wrapped as `inner`."""

    def __init__(self, inner: TextTokenizer) -> None:
        self.inner = inner


def test_a_pretrained_teachers_wrapped_vocabulary_is_compared_by_what_it_wraps() -> None:
    corpus = ["a good film", "a bad film"] * 4
    one = TextTokenizer(train_subword_tokenizer(corpus, vocab_size=40))
    other = TextTokenizer(train_subword_tokenizer([*corpus, "zebra xylophone quartz"], vocab_size=60))
    student = Distill(one, 2, encoder(16, 1), teacher="unused")
    student.set_teacher(Classifier(one, 2, encoder(32, 2)), Wrapped(one))  # MiniLM's file, its own embedder
    with pytest.raises(UserError, match="tokenizer"):
        Distill(one, 2, encoder(16, 1), teacher="unused").set_teacher(
            Classifier(other, 2, encoder(16, 1)), Wrapped(other)
        )
