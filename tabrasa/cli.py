"""`tabrasa fit|validate|test|predict --config ...` through LightningCLI, plus `tabrasa data` and `convert`.

LightningCLI gives `--print_config`, dotted overrides and every Trainer flag (`--trainer.devices`,
`--trainer.strategy`). tabrasa adds two links so derived numbers are never typed twice: the data
module's tokenizer (vocabulary size, patch size, mel bins) and number of outputs flow into the model.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lightning_fabric.plugins import CheckpointIO
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint, RichProgressBar
from pytorch_lightning.cli import LightningArgumentParser, LightningCLI

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.tasks.task import TokenTask
from tabrasa.training import ResumeCheckpoint, ResumeState, SafetensorsCheckpointIO, load_hyper_parameters


class TabrasaCLI(LightningCLI):
    def instantiate_trainer(self, **kwargs: Any) -> Trainer:
        # A rich progress bar unless the user turned progress bars off (logs, CI).
        if self._get(self.config_init, "trainer.enable_progress_bar", True) is not False:
            kwargs.setdefault("callbacks", []).append(RichProgressBar(leave=True))
        # Checkpoints are safetensors, written atomically, unless the user chose another CheckpointIO.
        plugins = self._get(self.config_init, "trainer.plugins") or []
        plugins = list(plugins) if isinstance(plugins, list | tuple) else [plugins]
        if not any(isinstance(p, CheckpointIO) for p in plugins):
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

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="after `fit`, evaluate the best checkpoint (lowest validation loss) on the test split",
        )
        parser.link_arguments("data.tokenizer", "model.init_args.tokenizer", apply_on="instantiate")
        parser.link_arguments("data.num_outputs", "model.init_args.num_outputs", apply_on="instantiate")
        # --checkpoint.every_n_train_steps N or --checkpoint.every_minutes M: how often last.ckpt is renewed.
        parser.add_lightning_class_args(ResumeCheckpoint, "checkpoint")

    def after_fit(self) -> None:
        if self.config[self.subcommand].get("test_after_fit") and not self.trainer.fast_dev_run:
            best = (
                self.trainer.checkpoint_callback.best_model_path if self.trainer.checkpoint_callback else ""
            )
            self.trainer.test(self.model, datamodule=self.datamodule, ckpt_path=best or None)


def trainer_defaults() -> dict[str, object]:
    """Rich progress, the best (by validation loss) checkpoint, learning-rate logging, RNG states in every
    checkpoint. last.ckpt is written by the `checkpoint` (ResumeCheckpoint) callback, mid-epoch too."""
    return {
        "callbacks": [
            ModelCheckpoint(monitor="val/loss", mode="min", save_last=False, filename="best-{epoch}-{step}"),
            LearningRateMonitor(logging_interval="step"),
            ResumeState(),
        ],
        "default_root_dir": "runs",
    }


def run_lightning(args: list[str]) -> None:
    TabrasaCLI(
        TokenTask,
        TabrasaDataModule,
        subclass_mode_model=True,
        subclass_mode_data=True,
        seed_everything_default=0,
        trainer_defaults=trainer_defaults(),
        save_config_kwargs={"overwrite": True},
        auto_configure_optimizers=False,
        args=args,
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] == "convert":
        from tabrasa.pretrained.convert_cli import main as convert_main

        return convert_main(args[1:])
    if args and args[0] == "data":
        from tabrasa.data.prepare_cli import main as data_main

        return data_main(args[1:])
    run_lightning(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
