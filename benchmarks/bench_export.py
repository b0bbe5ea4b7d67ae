"""CPU inference of one trained run four ways: PyTorch fp32 and int8 (dynamic quantization), onnxruntime
fp32 and int8 (its dynamic quantization), with each one's accuracy on the same IMDB test examples.

    nice -n 5 tabrasa fit --config configs/text/imdb.yaml --trainer.max_epochs 1 \\
        --trainer.default_root_dir /tmp/exp_imdb --trainer.logger.init_args.save_dir /tmp/exp_imdb
    python -m benchmarks.bench_export --run /tmp/exp_imdb/imdb/version_0 --ckpt best

Throughput counts the model only (embedder + backbone + head on pre-tokenised, padded batches), in
examples per second on `--threads` CPU threads, over the whole evaluated sample after one warm-up batch.
Writes results/export/bench_export.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from benchmarks.speed import quantize_int8
from tabrasa.deploy.onnx_export import export_onnx
from tabrasa.deploy.parity import parity
from tabrasa.deploy.run import load_run
from tabrasa.tokenizers.base import Batch

Forward = Callable[[Batch], np.ndarray]  # a batch → logits (B, C)


def test_sample(run, count: int, seed: int) -> tuple[list[str], np.ndarray]:  # type: ignore[no-untyped-def]
    """A seeded sample of the test split (IMDB's test split is sorted by label, so not its head)."""
    test = run.datamodule.load_splits()["test"]
    rows = np.random.default_rng(seed).permutation(len(test))[:count]
    picked = test.select(np.sort(rows))
    return list(picked["text"]), np.asarray(picked["label"])


def measure(forward: Forward, batches: list[Batch], labels: np.ndarray) -> dict[str, float]:
    forward(batches[0])  # warm-up: allocations, oneDNN / onnxruntime kernel selection
    start = time.perf_counter()
    logits = [forward(b) for b in batches]
    seconds = time.perf_counter() - start
    predicted = np.concatenate(logits).argmax(-1)
    return {
        "examples_per_s": round(len(labels) / seconds, 1),
        "seconds": round(seconds, 2),
        "accuracy": round(float((predicted == labels).mean()), 4),
    }


def torch_forward(model: torch.nn.Module) -> Forward:
    def forward(batch: Batch) -> np.ndarray:
        with torch.inference_mode():
            return model(batch).float().numpy()

    return forward


def onnx_forward(path: Path, names: list[str], threads: int) -> Forward:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return lambda batch: session.run(["logits"], {n: batch[n].numpy() for n in names})[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run", default="/tmp/exp_imdb/imdb/version_0")
    parser.add_argument("--ckpt", default="best")
    parser.add_argument("--examples", type=int, default=2000, help="seeded sample of the test split")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="results/export")
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    run = load_run(options.run, options.ckpt)
    texts, labels = test_sample(run, options.examples, seed=0)
    tokenizer = run.tokenizer.eval()
    batches = [
        {
            k: v
            for k, v in tokenizer.encode_batch(texts[i : i + options.batch_size]).items()
            if k != "truncated"
        }
        for i in range(0, len(texts), options.batch_size)
    ]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        exported = export_onnx(run, folder)
        int8_path = Path(folder) / "model.int8.onnx"
        quantize_dynamic(str(exported.path), str(int8_path), weight_type=QuantType.QInt8)
        variants: dict[str, Forward] = {
            "pytorch fp32": torch_forward(run.model),
            "pytorch int8 (dynamic)": torch_forward(quantize_int8(run.model)),
            "onnxruntime fp32": onnx_forward(exported.path, exported.input_names, options.threads),
            "onnxruntime int8 (dynamic)": onnx_forward(int8_path, exported.input_names, options.threads),
        }
        for name, forward in variants.items():
            results[name] = measure(forward, batches, labels)
            print(name, results[name], flush=True)
        sizes = {
            "onnx fp32 MB": exported.path.stat().st_size / 1e6,
            "onnx int8 MB": int8_path.stat().st_size / 1e6,
        }
        max_diff = parity(run, exported.path)
    report = {
        "run": str(run.config_path.parent),
        "checkpoint": str(run.checkpoint_path),
        "examples": len(labels),
        "batch_size": options.batch_size,
        "threads": options.threads,
        "parity_max_abs_logits_onnx_vs_pytorch": max_diff,
        "model_file_sizes_mb": {k: round(v, 2) for k, v in sizes.items()},
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "load_average_at_end": os.getloadavg(), "torch": torch.__version__},
        "results": results,
    }  # fmt: skip
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_export.json").write_text(json.dumps(report, indent=2) + "\n")
    base = results["pytorch fp32"]["examples_per_s"]
    lines = [
        f"IMDB test sample of {len(labels)} reviews (seeded), batch {options.batch_size}, "
        f"{options.threads} CPU "
        f"threads; checkpoint {run.checkpoint_path.name}; ONNX vs PyTorch max |Δlogit| {max_diff:.1e}.",
        "",
        "| runtime | examples/s | speed-up | accuracy |",
        "|---|---:|---:|---:|",
        *(f"| {name} | {r['examples_per_s']:.0f} | {r['examples_per_s'] / base:.2f}× | {r['accuracy']:.4f} |"
          for name, r in results.items()),
    ]  # fmt: skip
    (out / "bench_export.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
