#!/usr/bin/env bash
# The GPU evidence as one prepared run, for one machine with one GPU (README "Evidence"):
#   1. the data-using learning curves and permutation test (python -m benchmarks.bench_curves), resumable;
#   2. bf16 training throughput of tabrasa's backbone against timm ViT blocks and Hugging Face BertModel at
#      the README's shapes, tokens/s and MFU against the GPU's measured bf16 matmul peak;
#   3. one epoch of the IMDB preset in bf16 on the GPU, tested on the whole test split;
#   4. FSDP / FSDP2 against DDP: peak memory per device (scripts/gpu_sharding.py);
#   5. the mixers (Mamba, GAU, FLASH, continuous depth) against full and local attention from 256 to 16,384
#      tokens, bf16: time and peak memory per length (python -m benchmarks.bench_mixers);
#   6. the mixer presets that are hours of one CPU core (Fashion-MNIST with Mamba, about 3 h; with
#      continuous depth; IMDB with Mamba), trained and tested as shipped (fp32) so their cards compare
#      with the CPU presets' in docs/backbones.md (python -m benchmarks.run_presets).
# Everything goes under $OUT_DIR (default results/gpu/), with nvidia-smi's view of the device.
#
#   bash scripts/gpu_evidence.sh                      # on the GPU machine
#   bash scripts/gpu_evidence.sh --tiny               # seconds on CPU: checks the script end to end
#   STEPS="1 2 3" bash scripts/gpu_evidence.sh        # a subset of the parts, e.g. STEPS=2 for speed only
#   CURVE_HOURS=2 STEPS=1 bash scripts/gpu_evidence.sh # the curves, starting runs for 2 hours only
set -euo pipefail
cd "$(dirname "$0")/.."

TINY=0
[[ "${1:-}" == "--tiny" ]] && TINY=1
OUT_DIR=${OUT_DIR:-results/gpu}
STEPS=${STEPS:-"1 2 3 4 5 6"}
if [[ $TINY == 1 ]]; then DEVICE=${DEVICE:-cpu}; else DEVICE=${DEVICE:-cuda}; fi
if [[ $DEVICE == cuda ]] && ! python -c "import torch, sys; sys.exit(not torch.cuda.is_available())"; then
  echo "gpu_evidence.sh: no CUDA device visible to torch; run it on the GPU machine, or --tiny on CPU" >&2
  exit 2
fi
ACCELERATOR=$([[ $DEVICE == cuda ]] && echo gpu || echo cpu)
mkdir -p "$OUT_DIR"
(nvidia-smi || echo "no nvidia-smi on this machine") > "$OUT_DIR/nvidia_smi.txt" 2>&1
git rev-parse HEAD > "$OUT_DIR/commit.txt" 2>/dev/null || true

for step in $STEPS; do
  case $step in
    1)  # data-using learning curves and the permutation test: every arm, fraction and seed, early-stopped
        # on validation (benchmarks/curves/); resumes per arm from runs.jsonl
      sweep=()
      [[ $TINY == 1 ]] && sweep=(--smoke --modalities image --arms transformer floor_logreg)
      # a machine lent for a fixed time: start no run after CURVE_HOURS, finish the one under way
      [[ -n "${CURVE_HOURS:-}" ]] && sweep+=(--start-within "$CURVE_HOURS")
      python -m benchmarks.bench_curves "${sweep[@]}" --out "$OUT_DIR/curves" \
        --permutation-out "$OUT_DIR/permutation/summary.csv"
      ;;
    2)  # throughput and MFU at the README's shapes; int8 and the CPU profiler do not apply on a GPU
      size=$([[ $TINY == 1 ]] && echo --smoke || echo "--threads 16")
      python -m benchmarks.bench_throughput $size --device "$DEVICE" --precisions fp32,bf16 --no-int8 \
        --no-profile --part speed --out "$OUT_DIR/throughput.json"
      ;;
    3)  # one epoch of the IMDB preset in bf16, its run card beside the checkpoints
      budget=()
      [[ $TINY == 1 ]] && budget=(--trainer.max_steps 2 --data.init_args.limit 64)
      precision=$([[ $DEVICE == cuda ]] && echo bf16-mixed || echo 32-true)
      tabrasa fit --config configs/text/imdb.yaml --trainer.max_epochs 1 "${budget[@]}" \
        --trainer.accelerator "$ACCELERATOR" --trainer.devices 1 --trainer.precision "$precision" \
        --trainer.enable_progress_bar false --trainer.logger.init_args.save_dir "$OUT_DIR/imdb_fit"
      cp "$(find "$OUT_DIR/imdb_fit" -name run_card.json -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2)" \
        "$OUT_DIR/imdb_one_epoch.json"
      ;;
    4)  # FSDP (bf16, activation checkpointing) and FSDP2 against DDP: peak memory per device and step time
      sharding=()
      [[ $TINY == 1 ]] && sharding=(--tiny)
      python scripts/gpu_sharding.py "${sharding[@]}" --out "$OUT_DIR/sharding.json"
      ;;
    5)  # the mixers' scaling with length, as docs/backbones.md's CPU table, on the GPU in bf16
      lengths=()
      [[ $TINY == 1 ]] && lengths=(--smoke)
      python -m benchmarks.bench_mixers "${lengths[@]}" --device "$DEVICE" --precision bf16 \
        --out "$OUT_DIR/mixers.json"
      ;;
    6)  # the mixer presets too slow for the CPU, each card written to $OUT_DIR/presets/<config stem>.json
      presets=(configs/image/fashion_mnist_mamba.yaml configs/image/fashion_mnist_ode.yaml
        configs/text/imdb_mamba.yaml)
      budget=()
      if [[ $TINY == 1 ]]; then
        presets=(configs/image/fashion_mnist_mamba.yaml)
        budget=(--trainer.max_steps 2 --data.init_args.limit 64)
      fi
      python -m benchmarks.run_presets "${presets[@]}" --out "$OUT_DIR/presets" --extra "${budget[@]}" \
        --trainer.accelerator "$ACCELERATOR" --trainer.devices 1 --trainer.enable_progress_bar false
      ;;
    *) echo "gpu_evidence.sh: unknown step $step (choose from 1 2 3 4 5 6)" >&2; exit 2 ;;
  esac
done
echo "gpu_evidence.sh: wrote $OUT_DIR"
