#!/usr/bin/env bash
# Copies what the GPU machine needs (stripped) into .carry/ for the device tool.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${MCCL_BUILD_DIR:-build}
rm -rf .carry && mkdir -p .carry
cp -L "$B"/src/libmccl.so.0 .carry/
cp "$B"/tests/mccl_gpu_tests "$B"/tests/mccl_gpu_mpi_tests "$B"/bench/mccl-perf "$B"/mpi_examples/allreduce_world .carry/
[ -f "$B"/bench/nccl-perf ] && cp "$B"/bench/nccl-perf .carry/
for f in "$B"/mpi_examples/guide_*; do [ -x "$f" ] && cp "$f" .carry/; done
strip --strip-debug .carry/* 2>/dev/null || true
du -sh .carry
