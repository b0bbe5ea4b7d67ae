"""The one LightningCLI tabrasa builds: `tabrasa fit|validate|test|predict`, the benchmarks and the tests.

LightningCLI gives `--print_config`, dotted overrides and every Trainer flag (`--trainer.devices`,
`--trainer.strategy`). tabrasa adds two links so derived numbers are never typed twice: the data
module's tokenizer (vocabulary size, patch size, mel bins) and number of outputs flow into the model.
It lives in the training layer so that every layer above (deploy, inspect, the command line) can rebuild
a run without importing the command line.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
from lightning_fabric.plugins import CheckpointIO
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import RichProgressBar
from pytorch_lightning.cli import LightningArgumentParser, LightningCLI
from pytorch_lightning.utilities import rank_zero_info

from tabrasa.training.backbone_swap import with_backbone_resets
from tabrasa.training.best_checkpoint import BestCheckpoint, best_checkpoint_callback
from tabrasa.training.checkpointing import ResumeCheckpoint, ResumeState
from tabrasa.training.fit_clock import FitClock, fit_clock
from tabrasa.training.learning_rate_log import LearningRateLog
from tabrasa.training.nfe_log import FunctionEvaluationLog
from tabrasa.training.run_card import git_state, load_average, write_run_card
from tabrasa.training.safetensors_io import SafetensorsCheckpointIO, load_hyper_parameters
from tabrasa.training.sharding import check_sharding_supported, reads_checkpoints_itself  # registers names


class TabrasaCLI(LightningCLI):
    def instantiate_trainer(self, **kwargs: Any) -> Trainer:
        # A rich progress bar unless the user turned progress bars off (logs, CI).
        if self._get(self.config_init, "trainer.enable_progress_bar", True) is not False:
            kwargs.setdefault("callbacks", []).append(RichProgressBar(leave=True))
        # Checkpoints are safetensors, written atomically, unless the user chose another CheckpointIO, or
        # FSDP, whose full-checkpoint loader bypasses CheckpointIO plugins (docs/robustness.md).
        plugins = self._get(self.config_init, "trainer.plugins") or []
        plugins = list(plugins) if isinstance(plugins, list | tuple) else [plugins]
        strategy = self._get(self.config_init, "trainer.strategy", "auto")
        check_sharding_supported(strategy, self._get(self.config_init, "trainer.accelerator", "auto"))
        if not any(isinstance(p, CheckpointIO) for p in plugins) and not reads_checkpoints_itself(strategy):
            kwargs["plugins"] = [*plugins, SafetensorsCheckpointIO()]
        return super().instantiate_trainer(**kwargs)

    def _parse_ckpt_path(self) -> None:
        """LightningCLI's, reading the checkpoint's hyper-parameters with tabrasa's reader (safetensors, or
        torch.load(weights_only=True) for older files) instead of torch.load."""
        subcommand = self.config.get("subcommand")
        ckpt_path = self.config[subcommand].get("ckpt_path") if subcommand else None
        if not ckpt_path or not Path(ckpt_path).is_file():
            return
        hparams = dict(load_hyper_parameters(ckpt_path))
        hparams.pop("_instantiator", None)
        if not hparams:
            return
        if "_class_path" in hparams:
            hparams = {"class_path": hparams.pop("_class_path"), "dict_kwargs": hparams}
        try:
            self.config = self.parser.parse_object({subcommand: {"model": hparams}}, self.config)
        except SystemExit:
            sys.stderr.write("Parsing of ckpt_path hyperparameters failed!\n")
            raise

    def before_instantiate_classes(self) -> None:
        # A joint run's `--data.init_args.limit N` reaches every task's data module before it is built:
        # limit is applied before the expensive steps a data module runs at construction (synthesis plans).
        config = self.config[self.subcommand] if self.subcommand else self.config
        data = config.get("data")
        init = data.get("init_args") if data is not None and hasattr(data, "get") else None
        limit = init.get("limit") if init is not None and hasattr(init, "get") else None
        tasks = init.get("tasks") if init is not None and hasattr(init, "get") else None
        if limit is not None and tasks:
            for task in tasks.values():
                # An unlabelled view of a labelled module (InputsOf) takes the limit on its source.
                source = task["init_args"].get("source")
                (source or task)["init_args"]["limit"] = limit

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="after `fit`, evaluate the best checkpoint (by the task's selection metric: validation "
            "accuracy for classifiers, validation loss for regressors) on the test split",
        )
        parser.link_arguments("data.tokenizer", "model.init_args.tokenizer", apply_on="instantiate")
        parser.link_arguments("data.num_outputs", "model.init_args.num_outputs", apply_on="instantiate")
        # --checkpoint.every_n_train_steps N or --checkpoint.every_minutes M: how often last.ckpt is renewed.
        parser.add_lightning_class_args(ResumeCheckpoint, "checkpoint")

    def before_fit(self) -> None:
        # The card reads the clock the checkpoints carry, started here; a user's trainer.callbacks without
        # FitClock get one of their own that only times this process.
        self._clock = fit_clock(self.trainer) or FitClock()
        self._clock.start()
        self._load_at_start = load_average()
        self._git = git_state(Path.cwd())

    def after_fit(self) -> None:
        fit_seconds, fit_cpu_seconds = self._clock.this_process()
        if self.trainer.fast_dev_run:
            return
        # Read before the final test, which points trainer.ckpt_path at the checkpoint it tests.
        resumed_from = self.trainer.ckpt_path
        earlier = self._clock.earlier
        callback = best_checkpoint_callback(self.trainer)
        best = callback.best_model_path if callback is not None else ""
        selection = None
        if callback is not None and best:
            score = callback.best_model_score
            selection = (str(callback.monitor), float(score) if score is not None else None)
        test_metrics: dict[str, float] = {}
        tested: str | None = None
        if not getattr(self.datamodule, "has_test_split", True):
            rank_zero_info("The data has no test split (pretraining inputs): no final test")
        elif self.config[self.subcommand].get("test_after_fit"):
            if best:
                shown = f"{selection[1]:.4f}" if selection and selection[1] is not None else "n/a"
                rank_zero_info(f"Testing the best checkpoint by {callback.monitor} ({shown}): {best}")
            else:
                rank_zero_info(
                    "No monitored checkpoint was written (no validation ran): testing the last weights"
                )
            # A joint model prints its own per-task table; Lightning's would repeat every task per loader.
            verbose = not callable(getattr(self.model, "print_task_table", None))
            self.trainer.test(self.model, datamodule=self.datamodule, ckpt_path=best or None, verbose=verbose)
            test_metrics = {k: float(v) for k, v in self.trainer.callback_metrics.items() if "test" in k}
            tested = best or None
        folder = self.trainer.log_dir
        if folder and self.trainer.is_global_zero:
            path = write_run_card(
                Path(folder), self.trainer, self.datamodule, fit_seconds=fit_seconds,
                fit_cpu_seconds=fit_cpu_seconds,
                earlier=earlier, resumed_from=resumed_from,
                load_at_start=getattr(self, "_load_at_start", None),
                git=getattr(self, "_git", git_state(Path.cwd())),
                tested_checkpoint=tested, selection=selection, test_metrics=test_metrics,
            )  # fmt: skip
            rank_zero_info(f"Run card: {path}")


def trainer_defaults() -> dict[str, object]:
    """Rich progress, the best checkpoint by the task's own `selection_metric`, learning-rate logging, RNG
    states in every checkpoint. last.ckpt is written by the `checkpoint` (ResumeCheckpoint) callback,
    mid-epoch too."""
    return {
        "callbacks": [
            BestCheckpoint(),
            LearningRateLog(logging_interval="step"),
            FunctionEvaluationLog(),
            ResumeState(),
            FitClock(),
        ],
        "default_root_dir": "runs",
    }


SUBCOMMANDS = ("fit", "validate", "test", "predict")


def build_cli(
    args: list[str],
    *,
    run: bool = True,
    trainer_defaults_override: dict[str, Any] | None = None,
    save_config: bool = True,
) -> TabrasaCLI:
    """The one way tabrasa builds its LightningCLI: the `tabrasa` command, the benchmarks and the tests all
    call this, so they parse, link and default exactly alike.

    run=False builds model, data module and trainer without running a subcommand (benchmarks, tests).
    trainer_defaults_override replaces keys of `trainer_defaults()` (e.g. no callbacks for quiet runs).
    save_config=False skips writing config.yaml into the run folder.
    """
    if not run and args and args[0] in SUBCOMMANDS:
        args = args[1:]  # without a subcommand to run, the parser takes no subcommand name
    args = with_backbone_resets(args)  # a command-line backbone replaces the config's whole
    # `tabrasa` passes its own argv as `args`, which LightningCLI warns about when sys.argv is also set.
    warnings.filterwarnings("ignore", message="LightningCLI's args parameter")
    defaults = {**trainer_defaults(), **(trainer_defaults_override or {})}
    extra: dict[str, Any] = {} if save_config else {"save_config_callback": None}
    # Any LightningModule / LightningDataModule: single-task (TokenTask + a TabrasaDataModule) and joint
    # (JointTask + JointDataModule) runs are both `class_path` choices of the same command.
    return TabrasaCLI(
        pl.LightningModule,
        pl.LightningDataModule,
        subclass_mode_model=True,
        subclass_mode_data=True,
        seed_everything_default=0,
        trainer_defaults=defaults,
        save_config_kwargs={"overwrite": True},
        auto_configure_optimizers=False,
        # Parse errors raise instead of printing the whole usage and exiting: `main` prints them as one
        # line (and the original UserError, when a class raised one while the config was validated).
        parser_kwargs={"exit_on_error": False, **{name: {"exit_on_error": False} for name in SUBCOMMANDS}},
        args=args,
        run=run,
        **extra,
    )
