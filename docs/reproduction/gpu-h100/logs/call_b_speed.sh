#!/bin/bash
# GPU call B: stage chunk 2; the paper preset's training speed (fp32 vs bf16) and LDP-FL's client modes
mkdir -p /tmp/stage && cp .gpu/c2/payload.01 /tmp/stage/ || exit 1
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 240 python3 benchmarks/speed_report.py --entries .gpu/small/paper_arch.json --device cuda --seconds 1 \
  > $OUT/speed_paper_gpu.md 2> $OUT/speed_paper_gpu.err; echo "speed_report rc=$?"
cat $OUT/speed_paper_gpu.md
{ timeout 60 python3 benchmarks/ldpfl_clients.py --device cuda --clients 20 --per-client 600 --group 10 20
  timeout 60 python3 benchmarks/ldpfl_clients.py --device cuda --arch vgg-32-64-128-256 --shape 3 32 32 --clients 50 --per-client 100 --group 25 50
} 2>&1 | tee $OUT/ldpfl_clients_gpu.txt
