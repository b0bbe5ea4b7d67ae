"""Streaming corpora against the in-memory path: peak memory as the corpus grows 10×, and throughput.

The UniProt pretraining inputs (metastudent-data, `UnlabelledUniProt` with configs/pretrain/protein.yaml's
tokenizer: ESM alphabet, 256 tokens) at two sizes are written once as streaming corpora. Each measurement
runs in a fresh process (so its memory is its own) and iterates the training loader through the
pretraining collate in the main process (num_workers 0: every byte the loader holds is counted):

- memory: `UnlabelledUniProt(limit=N).train_dataloader()`, what `tabrasa fit --config
  configs/pretrain/protein.yaml` does today: residue strings from the cached Arrow table (with datasets >= 4
  a lazy, memory-mapped `Column`, so not a Python list), tokenised in the loader;
- streaming: `StreamingDataModule(corpus).train_dataloader()`: token ids read chunk by chunk.

Throughput is examples per second over the first `--timed` examples of an epoch (both paths draw them
at random from the same corpus); the streaming path then reads to the end of its epoch, so its RSS
covers every chunk. RSS is sampled while iterating (the process peak, ru_maxrss, is set by imports before
any data is read, so it is reported but not compared). Rounds alternate memory and streaming; medians are
reported.

    python -m benchmarks.bench_streaming        # 20k and 200k proteins (~15 min to prepare, once)
    python -m benchmarks.bench_streaming --sizes 2000,20000 --rounds 1 --out /tmp/streaming   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RSS_FLAT = 0.10  # the goal: peak RSS within 10% when the corpus grows 10×
THROUGHPUT_FLOOR = 0.90  # and at least 90% of the in-memory path's examples per second
TOKENIZER = {"max_length": 256, "truncation": "head_tail", "unknown": "x"}  # configs/pretrain/protein.yaml


def rss_mib() -> dict[str, float]:
    """This process's resident set now, MiB: whole, anonymous (heap: what a Python list of sequences
    costs) and file-backed (mapped chunk pages, which the kernel may drop and re-read), from /proc."""
    with open("/proc/self/status") as handle:
        lines = [line.split(":", 1) for line in handle if line.startswith(("VmRSS", "RssAnon", "RssFile"))]
    kib = {name: int(value.split()[0]) / 1024 for name, value in lines}
    return {"rss": kib["VmRSS"], "anon": kib["RssAnon"], "file": kib["RssFile"]}


def highest(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: max(a[k], b[k]) for k in a}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def uniprot(size: int, cache: Path, batch: int) -> Any:
    from tabrasa.data.loader import LoaderConfig
    from tabrasa.data.unlabelled.uniprot import UnlabelledUniProt
    from tabrasa.tokenizers.esm import EsmProteinTokenizer

    return UnlabelledUniProt(
        tokenizer=EsmProteinTokenizer(**TOKENIZER),  # type: ignore[arg-type]
        limit=size,
        val_size=1000,
        cache_dir=str(cache),
        loader=LoaderConfig(batch_size=batch),
    )


def prepare(size: int, cache: Path, work: Path, batch: int, chunk_bytes: str) -> dict[str, Any]:
    """The in-memory source cached and its streaming corpus written (once; reused when present)."""
    from tabrasa.data.streaming_prepare import write_streaming_corpus

    corpus = work / f"uniprot-{size}-{chunk_bytes}"
    data = uniprot(size, cache, batch)
    data.setup()
    seconds = None
    if not corpus.exists():
        started = time.perf_counter()
        write_streaming_corpus(data, corpus, chunk_bytes=chunk_bytes, num_workers=1)
        seconds = round(time.perf_counter() - started, 1)
    chunks = list(corpus.rglob("chunk-*.bin"))
    return {
        "size": size,
        "train": len(data.split_indices("train")),
        "corpus": str(corpus),
        "write_seconds": seconds,
        "corpus_mib": round(sum(p.stat().st_size for p in chunks) / 2**20, 1),
        "chunks": len(chunks),
    }


def measure(kind: str, size: int, cache: Path, corpus: Path, batch: int, timed: int) -> dict[str, Any]:
    """One path in this process: examples/s over the first `timed` examples; the streaming path then
    reads on to the end of the epoch (every chunk once), the in-memory one stops (its inputs are all in
    memory from setup on, and tokenising 200k proteins in the loader takes minutes). RSS is sampled
    every 20 batches."""
    import torch

    from tabrasa.data.loader import LoaderConfig
    from tabrasa.data.streaming import StreamingDataModule

    torch.set_num_threads(1)
    if kind == "memory":
        data = uniprot(size, cache, batch)
        data.setup()
    else:
        data = StreamingDataModule(str(corpus), loader=LoaderConfig(batch_size=batch))
    loader = data.train_dataloader()
    baseline = rss_mib()
    peak, examples, tokens, seconds = baseline, 0, 0, 0.0
    started = time.perf_counter()
    for step, batch_ in enumerate(loader, 1):
        examples += batch_["input_ids"].shape[0]
        tokens += int(batch_["attention_mask"].sum())
        if not seconds and examples >= timed:
            seconds, timed = time.perf_counter() - started, examples
            if kind == "memory":
                break
        if step % 20 == 0:
            peak = highest(peak, rss_mib())
    seconds = seconds or time.perf_counter() - started
    timed = min(timed, examples)
    return {
        "kind": kind,
        "size": size,
        "examples_read": examples,
        "tokens_read": tokens,
        "timed_examples": timed,
        "examples_per_s": round(timed / seconds, 1),
        "rss_after_setup_mib": round(baseline["rss"], 1),
        **{f"iteration_peak_{k}_mib": round(v, 1) for k, v in highest(peak, rss_mib()).items()},
        "process_peak_rss_mib": round(peak_rss_mib(), 1),
    }


def in_child(kind: str, size: int, cache: Path, corpus: str, batch: int, timed: int) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "benchmarks.bench_streaming", "--measure", kind, "--sizes", str(size),
        "--cache", str(cache), "--corpus", corpus, "--batch-size", str(batch), "--timed", str(timed),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"measuring {kind} at {size} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summarise(rows: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    def median(kind: str, size: int, key: str) -> float:
        return statistics.median(r[key] for r in rows if r["kind"] == kind and r["size"] == size)

    small, large = min(sizes), max(sizes)
    out: dict[str, Any] = {}
    for kind in ("memory", "streaming"):
        grown = median(kind, large, "iteration_peak_rss_mib") / median(kind, small, "iteration_peak_rss_mib")
        out[f"{kind}_peak_rss_growth"] = round(grown - 1, 4)
        for part in ("rss", "anon", "file"):
            key = f"iteration_peak_{part}_mib"
            out[f"{kind}_peak_{part}_added_mib"] = round(
                median(kind, large, key) - median(kind, small, key), 1
            )
    for size in sizes:
        ratio = median("streaming", size, "examples_per_s") / median("memory", size, "examples_per_s")
        out[f"streaming_over_memory_throughput_{size}"] = round(ratio, 3)
    out["rss_flat_within_10pct"] = out["streaming_peak_rss_growth"] <= RSS_FLAT
    out["throughput_at_least_90pct"] = all(
        out[f"streaming_over_memory_throughput_{s}"] >= THROUGHPUT_FLOOR for s in sizes
    )
    return out


COLUMNS = ("examples_per_s", "iteration_peak_rss_mib", "iteration_peak_anon_mib", "iteration_peak_file_mib")


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Streaming vs in-memory UniProt pretraining inputs (collate only, 1 thread)",
        "",
        "| path | proteins | examples/s | peak RSS while iterating | of it anonymous | of it file-backed |",
        "|---|---|---|---|---|---|",
    ]
    sizes = sorted({r["size"] for r in result["rounds"]})
    for kind in ("memory", "streaming"):
        for size in sizes:
            mine = [r for r in result["rounds"] if r["kind"] == kind and r["size"] == size]
            rate, *memory = (statistics.median(r[key] for r in mine) for key in COLUMNS)
            shown = " | ".join(f"{m:,.0f} MiB" for m in memory)
            lines.append(f"| {kind} | {size:,} | {rate:,.0f} | {shown} |")
    lines += [
        "",
        "Medians over the rounds.",
        "",
        "```json",
        json.dumps(result["summary"], indent=2),
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20000,200000", help="training proteins, comma-separated")
    parser.add_argument("--rounds", type=int, default=2, help="alternating measurements per path and size")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--timed", type=int, default=20000, help="examples timed per measurement")
    parser.add_argument("--chunk-bytes", default="16MB", help="chunk size of the corpora")
    default_cache = Path(os.environ.get("TABRASA_CACHE", "~/.cache/tabrasa"))
    parser.add_argument("--cache", type=Path, default=default_cache)
    parser.add_argument(
        "--work", type=Path, default=None, help="where the corpora go (default CACHE/streaming)"
    )
    parser.add_argument("--out", type=Path, default=Path("results/streaming"))
    parser.add_argument("--measure", choices=["memory", "streaming"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    cache = args.cache.expanduser()
    if args.measure:  # a child: one measurement, one JSON line
        row = measure(args.measure, sizes[0], cache, Path(args.corpus), args.batch_size, args.timed)
        print(json.dumps(row))
        return 0
    work = (args.work or cache / "streaming").expanduser()
    prepared = {size: prepare(size, cache, work, args.batch_size, args.chunk_bytes) for size in sizes}
    rows = []
    for round_ in range(args.rounds):
        for size in sizes:
            for kind in ("memory", "streaming"):
                row = in_child(kind, size, cache, prepared[size]["corpus"], args.batch_size, args.timed)
                rows.append({**row, "round": round_})
                print(f"{kind:<9} {size:>7,}: {row['examples_per_s']:>8,.0f} examples/s, "
                      f"peak RSS {row['iteration_peak_rss_mib']:,.0f} MiB", flush=True)  # fmt: skip
    result = {
        "prepared": list(prepared.values()),
        "rounds": rows,
        "summary": summarise(rows, sizes),
        "batch_size": args.batch_size,
        "chunk_bytes": args.chunk_bytes,
        "timed_examples": args.timed,
        "tokenizer": TOKENIZER,
        "cpus": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_streaming.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "bench_streaming.md").write_text(markdown(result))
    print(json.dumps(result["summary"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
