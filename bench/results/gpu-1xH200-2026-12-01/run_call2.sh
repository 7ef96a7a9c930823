#!/usr/bin/env bash
# Call 2 (one H200): bench/micro/ce_copy.cu again with a control (run twice: the first time
# without loading its kernels first, whose first launch waited for the spinning kernel): beside a kernel that spins
# on one stream, a kernel on another stream issued before any copy, then a copy within the
# GPU by the copy engines, then a kernel on a fourth stream issued after it; with CUDA's
# default hardware queues and with CUDA_DEVICE_MAX_CONNECTIONS=32 (what the tests set).
cd "$(dirname "$0")/../../.."
for conn in default 32; do
  echo "== CUDA_DEVICE_MAX_CONNECTIONS=$conn"
  if [ $conn = default ]; then env -u CUDA_DEVICE_MAX_CONNECTIONS timeout 60 .carry/micro_ce_copy
  else CUDA_DEVICE_MAX_CONNECTIONS=$conn timeout 60 .carry/micro_ce_copy; fi
  echo "rc=$?"
done 2>&1 | tee $OUT/call2_ce_copy.txt
