#!/usr/bin/env bash
# The GPU machine's check: topology, the "gpu" tests (one process driving every GPU, and
# one GPU per MPI rank), the examples, and mccl-perf against NVIDIA's NCCL measured in the
# same run. Binaries come from a build made elsewhere (scripts/gpu-carry.sh puts them in
# .carry/); logs go to $OUT (or ./gpu-out).
#
#   scripts/gpu-check.sh [tests|perf|all] [mccl-perf options...]
set -uo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-all}
shift || true
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
BIN=${MCCL_BIN:-.carry}
# scripts/gpu-carry.sh packs the binaries (the device tool's 64 MiB limit).
if [ -f "$BIN/pack.tar.xz" ] && [ ! -f "$BIN/libmccl.so.0" ]; then tar -xJf "$BIN/pack.tar.xz" -C "$BIN"; fi
export LD_LIBRARY_PATH="$PWD/$BIN:${LD_LIBRARY_PATH:-}"
# Never NVLink multicast on shared machines.
export NCCL_NVLS_ENABLE=0
export MCCL_TIMEOUT=${MCCL_TIMEOUT:-20}
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } > "$OUT/topo.txt" 2>&1
echo "GPUs: $NGPU"

if [ "$MODE" = tests ] || [ "$MODE" = all ]; then
  timeout 400 "$BIN/mccl_gpu_tests" ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} > "$OUT/gpu_single.log" 2>&1
  echo "gpu_single: rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/gpu_single.log" | tr '\n' ' ')"
  (unset GTEST_FILTER; timeout 300 $MPIRUN -np "$NGPU" "$BIN/mccl_gpu_mpi_tests" ${MPI_GTEST_FILTER:+--gtest_filter=$MPI_GTEST_FILTER} > "$OUT/gpu_mpi.log" 2>&1)
  echo "gpu_mpi: rc=$? $(grep -aE '(PASSED|FAILED|SKIPPED) ' "$OUT/gpu_mpi.log" | head -3 | tr '\n' ' ')"
  if [ -x "$BIN/mccl_gpu_devapi_tests" ]; then
    timeout 200 $MPIRUN -np 2 "$BIN/mccl_gpu_devapi_tests" > "$OUT/gpu_devapi.log" 2>&1
    echo "gpu_devapi: rc=$? $(grep -aE '(PASSED|FAILED|SKIPPED) ' "$OUT/gpu_devapi.log" | head -3 | tr '\n' ' ')"
  fi
  timeout 120 $MPIRUN -np "$NGPU" "$BIN/allreduce_world" > "$OUT/example.log" 2>&1
  echo "example: rc=$? $(tail -1 "$OUT/example.log")"
fi

if [ "$MODE" = perf ] || [ "$MODE" = all ]; then
  ARGS=${*:-"-b 8 -e 2G -f 4 -o allreduce"}
  for lib in mccl nccl; do
    timeout 300 $MPIRUN -np "$NGPU" "$BIN/$lib-perf" $ARGS --csv "$OUT/perf_$lib.csv" > "$OUT/perf_$lib.txt" 2> "$OUT/perf_$lib.err"
    echo "$lib-perf: rc=$?"
  done
fi
