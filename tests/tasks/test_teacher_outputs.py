"""Remembered teacher outputs: equal to the teacher's own, computed once per example whatever the batch
and its padding, kept in a file that only the same teacher may read."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tabrasa.backbone import Encoder
from tabrasa.backbone.config import EncoderConfig
from tabrasa.errors import UserError
from tabrasa.tasks import Classifier
from tabrasa.tasks.teacher_outputs import TeacherOutputs, checkpoint_digest, row_keys
from tabrasa.tokenizers import ProteinTokenizer

SEQUENCES = ["MKTAYIAK", "MSTN", "MKV", "MAAGGLLKQ", "MW"]


@pytest.fixture
def tokenizer() -> ProteinTokenizer:
    return ProteinTokenizer(max_length=16)


@pytest.fixture
def teacher(tokenizer: ProteinTokenizer) -> Classifier:
    torch.manual_seed(0)
    return Classifier(tokenizer, 3, Encoder(EncoderConfig(dim=16, depth=1, heads=2, max_len=32))).eval()


def batch_of(tokenizer: ProteinTokenizer, sequences: list[str]) -> dict[str, torch.Tensor]:
    return tokenizer.collate([{**tokenizer.encode(s), "label": torch.tensor(0)} for s in sequences])


def test_outputs_equal_the_teachers_and_each_example_runs_once(
    tokenizer: ProteinTokenizer, teacher: Classifier
) -> None:
    outputs = TeacherOutputs(teacher, "t")
    first = batch_of(tokenizer, SEQUENCES[:3])
    with torch.no_grad():
        expected = teacher(first)
    torch.testing.assert_close(outputs(first), expected, rtol=1e-5, atol=1e-6)
    assert (outputs.computed, outputs.reused) == (3, 0)
    # the same examples beside a longer one: other padding, another order, one new example
    second = batch_of(tokenizer, [SEQUENCES[3], SEQUENCES[1], SEQUENCES[0]])
    with torch.no_grad():
        expected = teacher(second)
    torch.testing.assert_close(outputs(second), expected, rtol=1e-5, atol=1e-6)
    assert (outputs.computed, outputs.reused) == (4, 2)


def test_padding_does_not_change_a_key_but_every_real_token_does(tokenizer: ProteinTokenizer) -> None:
    alone = row_keys(batch_of(tokenizer, [SEQUENCES[2]]))[0]
    padded = row_keys(batch_of(tokenizer, [SEQUENCES[2], SEQUENCES[3]]))[0]
    assert alone == padded
    assert row_keys(batch_of(tokenizer, ["MKW"]))[0] != alone  # one residue differs
    assert row_keys(batch_of(tokenizer, ["MKVA"]))[0] != alone  # one residue more


def test_a_saved_table_is_reused_and_refused_for_another_teacher(
    tokenizer: ProteinTokenizer, teacher: Classifier, tmp_path: Path
) -> None:
    batch = batch_of(tokenizer, SEQUENCES)
    first = TeacherOutputs(teacher, "teacher-a")
    expected = first(batch)
    first.save(tmp_path / "cache.safetensors")
    again = TeacherOutputs(teacher, "teacher-a")
    again.load(tmp_path / "cache.safetensors")
    torch.testing.assert_close(again(batch), expected)
    assert again.computed == 0
    with pytest.raises(UserError, match="teacher-a"):
        TeacherOutputs(teacher, "teacher-b").load(tmp_path / "cache.safetensors")


def test_the_digest_names_the_checkpoints_bytes(tmp_path: Path) -> None:
    one, two = tmp_path / "a.ckpt", tmp_path / "b" / "a.ckpt"
    two.parent.mkdir()
    one.write_bytes(b"weights")
    two.write_bytes(b"weights!")
    assert checkpoint_digest(one) != checkpoint_digest(two)
    assert checkpoint_digest(one).startswith("a.ckpt:")


@pytest.mark.slow
def test_a_distilling_fit_keeps_its_teachers_outputs_for_the_next(tmp_path: Path) -> None:
    from tabrasa.training.lightning_cli import build_cli
    from tests.deploy.conftest import TINY_ENCODER, fit_text_run

    teacher = fit_text_run(tmp_path, "teacher", TINY_ENCODER, max_epochs=1)
    cache = tmp_path / "teacher_outputs.safetensors"

    def distil() -> TeacherOutputs:
        cli = build_cli(
            ["fit", "--config", str(tmp_path / "teacher.yaml"),
             "--model.class_path", "tabrasa.tasks.distill.Distill",
             "--model.init_args.teacher", str(teacher),
             "--model.init_args.teacher_cache", str(cache),
             "--trainer.max_epochs", "2", "--trainer.logger", "false",
             "--trainer.default_root_dir", str(tmp_path / "students")],
            save_config=False,
        )  # fmt: skip
        outputs = cli.model._teacher
        assert isinstance(outputs, TeacherOutputs)
        return outputs

    first = distil()
    # 40 lines of 2 distinct texts over 2 epochs: the teacher ran on each distinct text once
    assert first.computed == 2 and first.reused > 0 and cache.exists()
    second = distil()
    assert second.computed == 0 and second.reused == first.computed + first.reused
