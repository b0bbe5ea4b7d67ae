"""`tabrasa fit|validate|test|predict --config ...` through LightningCLI, plus `tabrasa data` and `convert`.

LightningCLI gives `--print_config`, dotted overrides and every Trainer flag (`--trainer.devices`,
`--trainer.strategy`). tabrasa adds two links so derived numbers are never typed twice: the data
module's tokenizer (vocabulary size, patch size, mel bins) and number of outputs flow into the model.
"""

from __future__ import annotations

import sys
from typing import Any

from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint, RichProgressBar
from pytorch_lightning.cli import LightningArgumentParser, LightningCLI

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.tasks.task import TokenTask


class TabrasaCLI(LightningCLI):
    def instantiate_trainer(self, **kwargs: Any) -> Trainer:
        # A rich progress bar unless the user turned progress bars off (logs, CI).
        if self._get(self.config_init, "trainer.enable_progress_bar", True) is not False:
            kwargs.setdefault("callbacks", []).append(RichProgressBar(leave=True))
        return super().instantiate_trainer(**kwargs)

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="after `fit`, evaluate the best checkpoint (lowest validation loss) on the test split",
        )
        parser.link_arguments("data.tokenizer", "model.init_args.tokenizer", apply_on="instantiate")
        parser.link_arguments("data.num_outputs", "model.init_args.num_outputs", apply_on="instantiate")

    def after_fit(self) -> None:
        if self.config[self.subcommand].get("test_after_fit") and not self.trainer.fast_dev_run:
            best = (
                self.trainer.checkpoint_callback.best_model_path if self.trainer.checkpoint_callback else ""
            )
            self.trainer.test(self.model, datamodule=self.datamodule, ckpt_path=best or None)


def trainer_defaults() -> dict[str, object]:
    """Rich progress, the last and the best (by validation loss) checkpoint, learning-rate logging."""
    return {
        "callbacks": [
            ModelCheckpoint(monitor="val/loss", mode="min", save_last=True, filename="best-{epoch}-{step}"),
            LearningRateMonitor(logging_interval="step"),
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
