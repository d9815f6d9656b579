#!/bin/bash
# GPU call C: reassemble the CIFAR-10 inputs, run FedMD-NFDP k = 16, 60, 120, 300 at 20 x 5,000 (reduced CNNs)
set -o pipefail
cat /tmp/stage/payload.00 /tmp/stage/payload.01 .gpu/c3/payload.02 > /tmp/payload.tar || exit 1
echo "$(cat .gpu/small/payload.sha256)  /tmp/payload.tar" | sha256sum -c - || exit 1
tar xf /tmp/payload.tar || exit 1
export PYTHONUNBUFFERED=1
timeout ${FEDMD_LIMIT:-470} python3 benchmarks/fedmd_device.py run .gpu/small/jobs.json --parallel 4 --threads 3 --logs gpu_logs 2>&1 | tee $OUT/run.txt
tar czf $OUT/results.tgz results/reduced/fedmd_budget --exclude='*.pt' gpu_logs; ls -la $OUT
