"""Peak GPU memory per device under DDP, FSDP and FSDP2: one preset trained a few hundred steps each way.

Each arm is a fresh `tabrasa fit` (its own processes and CUDA context) on N GPUs in bf16 mixed precision,
with `PeakMemory` (tabrasa/training/peak_memory.py) writing every rank's torch.cuda.max_memory_allocated.
The backbone is widened to BERT-base size by default (768 wide, 12 blocks) so that weights and AdamW state,
what sharding divides by N, are a visible share of the peak next to the activations.

    python scripts/gpu_sharding.py --devices 4 --out results/gpu/sharding.json
    python scripts/gpu_sharding.py --devices 2 --arms ddp fsdp_ac --steps 300 -- --data.loader.batch_size 16
    python scripts/gpu_sharding.py --tiny --out /tmp/sharding.json   # seconds on CPU: DDP and FSDP2 on gloo

Arguments after `--` go to every `tabrasa fit` unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GIB = 2**30


def fsdp(activation_checkpointing: bool) -> str:
    init = {"activation_checkpointing": activation_checkpointing}
    return json.dumps({"class_path": "tabrasa.training.sharding.TabrasaFSDPStrategy", "init_args": init})


# arm → --trainer.strategy. FSDP2 recomputes activations through the backbone's own config.checkpointing.
ARMS: dict[str, tuple[str, list[str]]] = {
    "ddp": ("ddp", []),
    "fsdp": (fsdp(False), []),
    "fsdp_ac": (fsdp(True), []),
    "fsdp2": ("tabrasa_fsdp2", []),
    "fsdp2_ac": ("tabrasa_fsdp2", ["--model.init_args.backbone.init_args.config.checkpointing", "true"]),
}
BACKBONE = "--model.init_args.backbone.init_args.config"
TINY = [
    "--data.limit", "64", "--data.tokenizer.init_args.max_length", "32",
    "--data.tokenizer.init_args.vocab_size", "300",
    "--data.loader.batch_size", "8", "--data.loader.num_workers", "0",
    f"{BACKBONE}.dim", "32", f"{BACKBONE}.max_len", "32",
]  # fmt: skip


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    extra: list[str] = []
    if "--" in argv:
        argv, extra = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default="configs/text/imdb.yaml", help="the preset to train")
    p.add_argument("--devices", type=int, default=None, help="GPUs per arm (default: every visible GPU)")
    p.add_argument("--steps", type=int, default=300, help="optimizer steps per arm")
    p.add_argument("--warmup-steps", type=int, default=20, help="steps left out of the step time")
    p.add_argument("--arms", nargs="+", choices=sorted(ARMS), default=["ddp", "fsdp", "fsdp_ac", "fsdp2"])
    p.add_argument("--width", type=int, default=768, help="backbone width (0: the preset's)")
    p.add_argument("--depth", type=int, default=12, help="backbone blocks (0: the preset's)")
    p.add_argument("--limit", type=int, default=20_000, help="training examples to read (--data.limit)")
    p.add_argument("--out", type=Path, required=True, help="JSON file to write")
    p.add_argument("--tiny", action="store_true", help="CPU, 2 processes, tiny model: checks the script only")
    return p.parse_args(argv), extra


def fit_command(args: argparse.Namespace, arm: str, folder: Path, extra: list[str]) -> list[str]:
    strategy, arm_args = ARMS[arm]
    memory = {"class_path": "tabrasa.training.peak_memory.PeakMemory", "init_args": {"folder": str(folder)}}
    memory["init_args"]["warmup_steps"] = args.warmup_steps
    command = [
        sys.executable, "-m", "tabrasa.cli", "fit", "--config", args.config,
        "--trainer.accelerator", "cpu" if args.tiny else "gpu", "--trainer.devices", str(args.devices),
        "--trainer.strategy", strategy, "--trainer.precision", "32-true" if args.tiny else "bf16-mixed",
        "--trainer.max_steps", str(args.steps), "--trainer.max_epochs", "-1",
        "--trainer.limit_val_batches", "0", "--trainer.num_sanity_val_steps", "0",
        "--trainer.logger", "false", "--trainer.default_root_dir", str(folder / "run"),
        "--trainer.enable_progress_bar", "false", "--test_after_fit", "false",
        f"--trainer.callbacks+={json.dumps(memory)}", *arm_args,
    ]  # fmt: skip
    if args.tiny:
        command += TINY
    else:
        command += ["--data.limit", str(args.limit)]
        if args.width:
            heads = max(1, args.width // 64)  # 64-wide heads, as BERT and ViT
            command += [f"{BACKBONE}.dim", str(args.width), f"{BACKBONE}.heads", str(heads)]
        if args.depth:
            command += [f"{BACKBONE}.depth", str(args.depth)]
    return command + extra


def run_arm(args: argparse.Namespace, arm: str, scratch: Path, extra: list[str]) -> dict[str, Any]:
    folder = scratch / arm
    command = fit_command(args, arm, folder, extra)
    print(f"[{arm}] {' '.join(command[2:])}", flush=True)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    ranks = [json.loads(p.read_text()) for p in sorted(folder.glob("rank*.json"))]
    result: dict[str, Any] = {
        "strategy": ARMS[arm][0],
        "extra_args": ARMS[arm][1],
        "returncode": done.returncode,
    }
    if done.returncode != 0 or len(ranks) != args.devices:
        result["error"] = (done.stderr or done.stdout)[-3000:]
        return result
    allocated = [r["peak_allocated_bytes"] for r in ranks]
    reserved = [r["peak_reserved_bytes"] for r in ranks]
    times = [r["seconds_per_step"] for r in ranks if r["seconds_per_step"] is not None]
    result.update(
        ranks=ranks,
        peak_allocated_gib_max=max(allocated) / GIB if None not in allocated else None,
        peak_reserved_gib_max=max(reserved) / GIB if None not in reserved else None,
        seconds_per_step=max(times) if times else None,  # the slowest rank sets the pace
    )
    return result


def show(name: str, result: dict[str, Any]) -> str:
    if "error" in result:
        return f"{name:10s} failed (exit {result['returncode']}): {result['error'].strip().splitlines()[-1:]}"

    def gib(value: float | None) -> str:
        return "   n/a" if value is None else f"{value:6.2f}"

    step = result["seconds_per_step"]
    per_step = "n/a" if step is None else f"{step * 1000:.0f} ms"
    return (
        f"{name:10s} peak allocated {gib(result['peak_allocated_gib_max'])} GiB, reserved "
        f"{gib(result['peak_reserved_gib_max'])} GiB per device (max over ranks), {per_step}/step"
    )


def main(argv: list[str]) -> int:
    args, extra = parse(argv)
    import torch  # after parsing, so --help is instant

    if args.tiny:
        args.devices, args.steps, args.warmup_steps = 2, 6, 2
        args.arms = [arm for arm in args.arms if not arm.startswith("fsdp_") and arm != "fsdp"] or ["ddp"]
    elif not torch.cuda.is_available():
        print(
            "gpu_sharding.py: no CUDA device visible to torch; run it on a GPU machine (FSDP needs CUDA), "
            "or pass --tiny for a CPU check of the script",
            file=sys.stderr,
        )
        return 2
    else:
        visible = torch.cuda.device_count()
        args.devices = args.devices or visible
        if args.devices > visible:
            print(f"gpu_sharding.py: --devices {args.devices} but {visible} GPU(s) visible", file=sys.stderr)
            return 2
    os.environ.setdefault("OMP_NUM_THREADS", "1" if args.tiny else "4")
    with tempfile.TemporaryDirectory(prefix="gpu_sharding-") as scratch:
        arms = {arm: run_arm(args, arm, Path(scratch), extra) for arm in args.arms}
    report = {
        "config": args.config,
        "devices": args.devices,
        "steps": args.steps,
        "warmup_steps": args.warmup_steps,
        "width": None if args.tiny else args.width or None,
        "depth": None if args.tiny else args.depth or None,
        "precision": "32-true" if args.tiny else "bf16-mixed",
        "extra_args": extra,
        "device_name": torch.cuda.get_device_name(0)
        if torch.cuda.is_available() and not args.tiny
        else "cpu",
        "torch": torch.__version__,
        "arms": arms,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    for name, result in arms.items():
        print(show(name, result))
    print(f"wrote {args.out}")
    return 1 if any("error" in result for result in arms.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
