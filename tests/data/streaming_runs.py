"""Child processes of tests/data/test_streaming.py: a DDP rank over gloo, and a training loop over a
streaming corpus that checkpoints its loader, can be SIGKILLed, and resumes.

    python -m tests.data.streaming_runs rank CORPUS OUT --rank R --world 2 --port P
    python -m tests.data.streaming_runs loop CORPUS LOG --state STATE [--pause-at N] [--resume]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import torch.distributed as dist

from tabrasa.data.loader import LoaderConfig
from tabrasa.data.streaming import StreamingDataModule
from tabrasa.io import atomic_write

BATCH = 4


def rank(corpus: str, out: Path, rank: int, world: int, port: int) -> None:
    """One rank's two epochs of indices, after the process group is up (as Lightning builds loaders)."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        loader = StreamingDataModule(corpus, loader=LoaderConfig(batch_size=BATCH)).train_dataloader()
        epochs = [[i for batch in loader for i in batch["index"].tolist()] for _ in range(2)]
        out.write_text(json.dumps(epochs))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def loop(corpus: str, log: Path, state: Path, pause_at: int | None, resume: bool, workers: int) -> None:
    """Iterate one epoch, logging each batch's indices; every 2 batches save the loader state (as a
    Lightning checkpoint would), and at batch `pause_at`, just after saving, wait to be killed."""
    data = StreamingDataModule(corpus, loader=LoaderConfig(batch_size=BATCH, num_workers=workers))
    loader = data.train_dataloader()
    done = 0
    if resume:
        saved = torch.load(state, weights_only=False)
        loader.load_state_dict(saved["loader"])
        done = saved["batches"]
    with open(log, "a") as handle:
        for batch in loader:
            done += 1
            handle.write(json.dumps(batch["index"].tolist()) + "\n")
            handle.flush()
            if done % 2 == 0:
                snapshot = {"loader": loader.state_dict(), "batches": done}
                atomic_write(state, lambda tmp, s=snapshot: torch.save(s, tmp))
            if done == pause_at:
                (log.parent / "paused").touch()
                time.sleep(600)  # the test SIGKILLs the process here, mid-epoch


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["rank", "loop"])
    parser.add_argument("corpus")
    parser.add_argument("out", type=Path)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--pause-at", type=int)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args(argv)
    if args.mode == "rank":
        rank(args.corpus, args.out, args.rank, args.world, args.port)
    else:
        loop(args.corpus, args.out, args.state, args.pause_at, args.resume, args.workers)


if __name__ == "__main__":
    main()
