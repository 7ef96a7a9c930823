#!/usr/bin/env bash
# Configures and builds mccl in ${MCCL_BUILD_DIR:-build}. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MCCL_BUILD_DIR:-build}
JOBS=${MCCL_JOBS:-$(nproc)}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] || [ $# -gt 0 ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${MCCL_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$JOBS" >/dev/null
echo "build: $BUILD_DIR ready"
