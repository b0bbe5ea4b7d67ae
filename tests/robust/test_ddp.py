"""Real two-process DDP on CPU (gloo): ranks stay identical, training matches one process at the same global
batch, and validation metrics are reduced over the whole validation set.

Why the comparison is fair: the train loader's EpochSampler shuffles by (seed, epoch) and deals rank r every
second example, so at each step the two ranks' batches of 8 are together exactly the one process's batch of
16; dropout is off; the loss is a mean, and DDP averages the ranks' gradients, so both runs take the same
steps. What remains is floating-point summation order (a batch of 16 vs two of 8 padded to their own
longest text), about 1e-7 relative per step; after 8 AdamW steps we allow 1e-5 absolute plus 1e-4 relative.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.tasks.task import TokenTask
from tabrasa.training import load_checkpoint
from tabrasa.training.lightning_cli import build_cli
from tests.robust.runs import TINY, callback_arg, last_value, metrics, run_cli, tiny_fit, version_dir

NO_DROPOUT = [
    "--model.init_args.backbone.init_args.config.dropout", "0",
    "--model.init_args.head_dropout", "0",
    "--trainer.accelerator", "cpu",
    "--trainer.max_epochs", "2",
]  # fmt: skip
# Summation order differs between an all-reduce of two half-batch gradients and one full-batch gradient;
# AdamW divides by sqrt(v), which amplifies that for near-zero gradients (seen: 5e-5 on one weight of
# 4,096 on a loaded machine, 1e-6 typically). A wrong global batch or sampler moves weights by ~lr = 1e-3.
TOLERANCE = {"atol": 1e-4, "rtol": 1e-3}


@pytest.fixture(scope="module")
def runs(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ddp")
    ranks = callback_arg("SaveRankWeights", folder=str(root / "ranks"))
    ddp = ["--data.loader.batch_size", "8", "--trainer.devices", "2", "--trainer.strategy", "ddp", ranks]
    run_cli(tiny_fit(root / "ddp", *NO_DROPOUT, *ddp))
    single = ["--data.loader.batch_size", "16", "--trainer.devices", "1"]
    run_cli(tiny_fit(root / "single", *NO_DROPOUT, *single))
    return {"ddp": root / "ddp", "single": root / "single", "ranks": root / "ranks"}


@pytest.mark.slow
@pytest.mark.distributed
def test_ranks_hold_identical_weights_after_training(runs: dict[str, Path]) -> None:
    rank0, rank1 = (load_file(runs["ranks"] / f"rank{r}.safetensors") for r in (0, 1))
    assert rank0.keys() == rank1.keys()
    for name in rank0:
        assert torch.equal(rank0[name], rank1[name]), name
    saved = load_checkpoint(version_dir(runs["ddp"], 0) / "checkpoints" / "last.ckpt")
    assert saved["global_step"] == 8  # 32 examples per rank, batches of 8, two epochs
    assert all(torch.equal(saved["state_dict"][k], rank0[k]) for k in rank0)


@pytest.mark.slow
@pytest.mark.distributed
def test_ddp_matches_one_process_at_the_same_global_batch(runs: dict[str, Path]) -> None:
    ddp = load_file(runs["ranks"] / "rank0.safetensors")
    single = load_checkpoint(version_dir(runs["single"], 0) / "checkpoints" / "last.ckpt")
    assert single["global_step"] == 8
    initial = initial_weights()
    moved = 0
    for name, tensor in single["state_dict"].items():
        torch.testing.assert_close(ddp[name], tensor, **TOLERANCE, msg=lambda m, n=name: f"{n}: {m}")
        moved += int(not torch.allclose(tensor, initial[name], **TOLERANCE))
    assert moved > len(initial) // 2, "training barely moved the weights: the comparison would prove nothing"


@pytest.mark.slow
@pytest.mark.distributed
def test_logged_validation_metrics_cover_the_whole_validation_set(runs: dict[str, Path]) -> None:
    """val/acc logged by the DDP run equals accuracy over all 64 validation examples in one process."""
    model, datamodule = build(["--data.loader.batch_size", "16"])
    state = load_checkpoint(version_dir(runs["ddp"], 0) / "checkpoints" / "last.ckpt")["state_dict"]
    model.load_state_dict(state)
    model.eval()
    correct, losses = [], []
    with torch.no_grad():
        for batch in datamodule.val_dataloader():
            logits = model(batch)
            correct.append(logits.argmax(-1) == batch["label"])
            losses.append(torch.nn.functional.cross_entropy(logits, batch["label"], reduction="none"))
    hits, loss = torch.cat(correct).float(), torch.cat(losses)
    assert len(hits) == 64
    logged = metrics(runs["ddp"])
    assert last_value(logged, "val/acc") == pytest.approx(hits.mean().item(), abs=1e-7)
    assert last_value(logged, "val/loss") == pytest.approx(loss.mean().item(), abs=1e-5)
    # Rank 0 alone saw every second example: had the ranks not been reduced, the number would differ.
    assert hits[0::2].mean().item() != pytest.approx(hits.mean().item(), abs=1e-7)


def build(extra: list[str]) -> tuple[TokenTask, TabrasaDataModule]:
    """The tiny config's model and data module, built in this process (no Trainer run)."""
    # Without --trainer.deterministic: it would switch torch's deterministic mode on for this whole process.
    flag = TINY.index("--trainer.deterministic")
    args = TINY[:flag] + TINY[flag + 2 :]
    cli = build_cli([*args, *NO_DROPOUT, "--trainer.logger", "false", *extra], run=False, save_config=False)
    cli.datamodule.setup("validate")
    return cli.model, cli.datamodule


def initial_weights() -> dict[str, torch.Tensor]:
    """The weights both runs started from: seed 0, the same construction."""
    model, _ = build(["--data.loader.batch_size", "16"])
    return {k: v.detach().clone() for k, v in model.state_dict().items()}
