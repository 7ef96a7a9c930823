#!/usr/bin/env bash
# A slim pack for A/B calls that only time builds of libmccl against each other: the
# benchmarks (mccl-perf, nccl-perf) and each build as .carry/ab/NAME/libmccl.so.0 (run with
# LD_LIBRARY_PATH=.carry/ab/NAME), without
# the test binaries (which hold a copy of every kernel each and would leave room for two
# builds at most under the device tool's 64 MiB).
#   MCCL_AB="name=dir ..." scripts/gpu-carry-ab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=${MCCL_BUILD_DIR:-build}
rm -rf .carry && mkdir -p .carry/stage
# (no base libmccl: every build measured is one of the ab/ ones)
for x in mccl-perf nccl-perf; do cp "$B"/bench/$x .carry/stage/; done
for v in ${MCCL_AB:-}; do mkdir -p ".carry/stage/ab/${v%%=*}" && cp -L "${v#*=}"/libmccl.so.0 ".carry/stage/ab/${v%%=*}/"; done
for f in .carry/stage/* .carry/stage/ab/*/*; do [ -f "$f" ] && strip --strip-debug "$f" 2>/dev/null || true; done
tar -C .carry/stage -cf - . | xz -T2 -9 > .carry/pack.tar.xz
rm -rf .carry/stage
ls -l .carry/pack.tar.xz
